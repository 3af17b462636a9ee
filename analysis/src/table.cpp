// Rendering of Table as text, markdown, csv and json.
#include "ceilings/table.hpp"

#include <locale.h>
#include <wchar.h>

#include <algorithm>
#include <cwchar>
#include <sstream>

namespace ceilings {

Format parse_format(const std::string& name) {
  if (name == "table") return Format::kTable;
  if (name == "markdown" || name == "md") return Format::kMarkdown;
  if (name == "csv") return Format::kCsv;
  if (name == "json") return Format::kJson;
  throw InputError("unknown format '" + name + "' (known: table, markdown, csv, json)");
}

namespace {

// The C library's character classes for UTF-8 (C.UTF-8 is built into glibc 2.35+ and musl), for this thread only:
// the process's own locale (and with it number formatting) is left alone. Null where the system has none.
locale_t utf8_ctype() {
  static const locale_t loc = [] {
    locale_t l = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
    return l ? l : newlocale(LC_CTYPE_MASK, "C.utf8", static_cast<locale_t>(nullptr));
  }();
  return loc;
}

// Display width in terminal columns: wcwidth's (a CJK character takes two, a combining accent none) where the
// system has a UTF-8 locale, else one a code point (as is text that is not valid UTF-8).
std::size_t width(const std::string& s) {
  const auto code_points =
      static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
  const locale_t loc = utf8_ctype();
  if (!loc || std::all_of(s.begin(), s.end(), [](char c) { return (c & 0x80) == 0; })) return code_points;
  const locale_t previous = uselocale(loc);
  std::mbstate_t state{};
  std::size_t columns = 0;
  bool ok = true;
  for (std::size_t i = 0; i < s.size() && ok;) {
    wchar_t wc = 0;
    const std::size_t n = std::mbrtowc(&wc, s.data() + i, s.size() - i, &state);
    if (n == 0 || n == static_cast<std::size_t>(-1) || n == static_cast<std::size_t>(-2)) {
      ok = false;
      break;
    }
    const int w = ::wcwidth(wc);  // -1: unprintable, or newer than the C library's tables (an emoji): one
    columns += w >= 0 ? static_cast<std::size_t>(w) : 1;
    i += n;
  }
  uselocale(previous);
  return ok ? columns : code_points;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// A cell of a GitHub-flavoured markdown table: a pipe would end the cell, a backslash escape what follows, and
// "<x>" read as an HTML tag and vanish (review 94).
std::string md_cell(const std::string& s) { return markdown_text(s); }

}  // namespace

std::string markdown_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '|': out += "\\|"; break;
      case '\\': out += "\\\\"; break;
      case '*': out += "\\*"; break;
      case '_': out += "\\_"; break;
      case '`': out += "\\`"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string render(const Table& t, Format format) {
  std::ostringstream os;
  const std::size_t n = t.columns.size();
  auto cell = [&](const std::vector<std::string>& row, std::size_t i) -> std::string {
    return i < row.size() ? row[i] : std::string();
  };
  auto right = [&](std::size_t i) { return i < t.right_aligned.size() && t.right_aligned[i]; };
  switch (format) {
    case Format::kJson: {
      json arr = json::array();
      for (const auto& row : t.rows) {
        json o = json::object();
        for (std::size_t i = 0; i < n; ++i) o[t.columns[i]] = cell(row, i);
        arr.push_back(o);
      }
      os << arr.dump(2) << "\n";
      break;
    }
    case Format::kCsv:
      for (std::size_t i = 0; i < n; ++i) os << (i ? "," : "") << csv_field(t.columns[i]);
      os << "\n";
      for (const auto& row : t.rows) {
        for (std::size_t i = 0; i < n; ++i) os << (i ? "," : "") << csv_field(cell(row, i));
        os << "\n";
      }
      break;
    case Format::kMarkdown:
      os << "|";
      for (const auto& c : t.columns) os << " " << md_cell(c) << " |";
      os << "\n|";
      for (std::size_t i = 0; i < n; ++i) os << (right(i) ? "---:|" : "---|");
      os << "\n";
      for (const auto& row : t.rows) {
        os << "|";
        for (std::size_t i = 0; i < n; ++i) os << " " << md_cell(cell(row, i)) << " |";
        os << "\n";
      }
      break;
    case Format::kTable: {
      std::vector<std::size_t> w(n, 0);
      for (std::size_t i = 0; i < n; ++i) w[i] = width(t.columns[i]);
      for (const auto& row : t.rows)
        for (std::size_t i = 0; i < n; ++i) w[i] = std::max(w[i], width(cell(row, i)));
      auto line = [&](const std::vector<std::string>& row) {
        std::string out;
        for (std::size_t i = 0; i < n; ++i) {
          const std::string c = cell(row, i);
          const std::string pad(w[i] - width(c), ' ');
          out += (i ? "  " : "") + (right(i) ? pad + c : (i + 1 == n ? c : c + pad));
        }
        while (!out.empty() && out.back() == ' ') out.pop_back();
        return out + "\n";
      };
      os << line(t.columns);
      std::vector<std::string> rule;
      for (std::size_t i = 0; i < n; ++i) rule.push_back(std::string(w[i], '-'));
      os << line(rule);
      for (const auto& row : t.rows) os << line(row);
      break;
    }
  }
  return os.str();
}

}  // namespace ceilings
