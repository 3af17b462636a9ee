// Typed, validating JSON field access with path-naming errors.
#include "ceilings/json_fields.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/magic.h>
#include <sys/vfs.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

namespace ceilings {

std::string json_type_name(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return "a number";
    default: return "an unsupported value";
  }
}

namespace {

// Builds the document as json::parse does, but a key that appears twice in one object is an InputError
// naming it (json::parse keeps the last value silently, so {"hbm.copy": ..., "hbm.copy": ...} would be
// read as whichever came last). The object being built holds the keys seen so far: no second set.
class UniqueKeysDom final : public nlohmann::json_sax<json> {
 public:
  UniqueKeysDom(json& root, const std::string& what, DuplicateKeys duplicates)
      : root_(root), what_(what), duplicates_(duplicates) {}

  bool null() override { return add(nullptr); }
  bool boolean(bool v) override { return add(v); }
  bool number_integer(number_integer_t v) override { return add(v); }
  bool number_unsigned(number_unsigned_t v) override { return add(v); }
  bool number_float(number_float_t v, const string_t&) override { return add(v); }
  bool string(string_t& v) override { return add(std::move(v)); }
  bool binary(binary_t& v) override { return add(json::binary(std::move(v))); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& k) override {
    Open& o = stack_.back();
    if (duplicates_ == DuplicateKeys::kRefuse && o.node->contains(k)) {
      std::string where;
      for (std::size_t i = 1; i < stack_.size(); ++i) where += stack_[i].label;
      throw InputError(what_ + ": the key '" + k + "' appears twice in " +
                       (where.empty() ? std::string("the top-level object") : "'" + where + "'") +
                       ": which of its values is meant is not known");
    }
    o.key = k;
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    error_ = e.what();  // a syntax error, or a number too large for a double (out_of_range 406)
    out_of_range_ = e.id == 406;
    return false;
  }

  const std::string& error() const { return error_; }
  bool out_of_range() const { return out_of_range_; }

 private:
  struct Open {
    json* node;
    std::string label;  // ".key" or "[i]" under its parent, for the error message
    std::string key;    // an object's key waiting for its value
  };

  // Places v in the open container (or as the root); returns where it is.
  json* place(json&& v, std::string* label) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Open& o = stack_.back();
    if (o.node->is_array()) {
      if (label) *label = "[" + std::to_string(o.node->size()) + "]";
      o.node->push_back(std::move(v));
      return &o.node->back();
    }
    if (label) *label = (stack_.size() > 1 ? "." : "") + o.key;
    json& slot = (*o.node)[o.key];
    slot = std::move(v);
    return &slot;
  }
  bool add(json&& v) {
    place(std::move(v), nullptr);
    return true;
  }
  bool open(json&& container) {
    // Copying, printing and destroying a json value recurse once per level: a document nested thousands
    // deep would overflow the stack. No ceilings input nests beyond a handful of levels.
    constexpr std::size_t kMaxDepth = 512;
    if (stack_.size() >= kMaxDepth)
      throw InputError(what_ + " nests arrays or objects more than " + std::to_string(kMaxDepth) + " levels deep");
    Open o;
    o.node = place(std::move(container), &o.label);  // an array's open element stays its last: no reallocation
    stack_.push_back(std::move(o));
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  json& root_;
  const std::string& what_;
  std::vector<Open> stack_;
  std::string error_;
  bool out_of_range_ = false;
  DuplicateKeys duplicates_;
};

}  // namespace

json parse_json_text(const std::string& text, const std::string& what, DuplicateKeys duplicates) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw InputError(what + " is empty");
  // The parser reads a NUL byte as the end of the text: whatever followed it would go unread.
  if (const std::size_t nul = text.find('\0'); nul != std::string::npos)
    throw InputError(what + " is not valid JSON (truncated or corrupt?): a NUL byte at offset " + std::to_string(nul));
  json doc;
  UniqueKeysDom dom(doc, what, duplicates);
  if (!json::sax_parse(text, &dom)) {
    if (dom.out_of_range())  // a number a double cannot hold: 1e400
      throw InputError(what + " holds a number out of range: " + dom.error());
    throw InputError(what + " is not valid JSON (truncated or corrupt?): " + dom.error());
  }
  return doc;
}

namespace {
// A pipe's text to its end (a writer closing it), capped as a file's is.
std::string read_pipe(const std::string& path, std::chrono::milliseconds writer_wait,
                      const std::function<InputError()>& too_large) {
  // Opened without blocking: a blocking open of a named pipe waits for a writer, for ever where none comes
  // (`mkfifo p.json; ceilings show p.json` hung until killed).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw InputError("cannot open '" + path + "': " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  std::string text;
  std::vector<char> buf(std::size_t{1} << 16);
  // A pipe with no name (`show <(cmd)`: /dev/fd/N) had its writer from the start: it ends when that ends, as
  // it would for cat. Only a named pipe (mkfifo) can be waiting for a writer that never comes.
  bool named = true;
#ifdef __linux__
  struct statfs where {};
  named = !(::fstatfs(fd, &where) == 0 && where.f_type == PIPEFS_MAGIC);
#endif
  if (named) {
    // Without O_NONBLOCK's wait, a read of an empty pipe says which it is: 0 when no writer has it open, EAGAIN
    // when one has and has not written yet (it may take its time: it is waited for like any pipe's writer).
    // poll wakes on data, or on POLLHUP once a writer has come and gone (Linux reports no hang-up on a named
    // pipe before its first writer); a writer that opens it and writes nothing is seen at the next read.
    const auto deadline = std::chrono::steady_clock::now() + writer_wait;
    for (;;) {
      const ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n > 0) {
        text.append(buf.data(), static_cast<std::size_t>(n));
        break;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n < 0) throw InputError("cannot read '" + path + "': " + std::strerror(errno));
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        throw InputError("'" + path + "' is a named pipe that no program opened for writing in " +
                         std::to_string((writer_wait.count() + 999) / 1000) +
                         " s: nothing to read (start its writer first, or pass a file)");
      pollfd p{fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 100)));
      if (ready > 0 && (p.revents & POLLHUP) && !(p.revents & POLLIN)) break;  // a writer came and went: empty
    }
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
    throw InputError("cannot read '" + path + "': " + std::strerror(errno));
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n == 0) break;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError("cannot read '" + path + "': " + std::strerror(errno));
    text.append(buf.data(), static_cast<std::size_t>(n));
    if (text.size() > kMaxInputFileBytes) throw too_large();  // a writer that does not stop
  }
  return text;
}
}  // namespace

std::string read_text_file(const std::string& path) { return read_text_file(path, kPipeWriterWait); }

std::string read_text_file(const std::string& path, std::chrono::milliseconds pipe_writer_wait) {
  namespace fs = std::filesystem;
  if (path.empty()) throw InputError("a file name is empty");
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) throw InputError("cannot open '" + path + "': no such file");
  if (ec) throw InputError("cannot open '" + path + "': " + ec.message());
  if (fs::is_directory(st)) throw InputError("'" + path + "' is a directory, not a file");
  // A device (/dev/zero) or a socket may never end: regular files are read, and pipes (`show <(...)`), which
  // end when their writer does (the size cap below stops one that does not).
  if (!fs::is_regular_file(st) && !fs::is_fifo(st))
    throw InputError("'" + path + "' is not a regular file or a pipe (a device or socket?)");
  const auto too_large = [&] {
    return InputError("'" + path + "' is larger than " + std::to_string(kMaxInputFileBytes >> 20) +
                      " MiB: not a ceilings input");
  };
  if (fs::is_fifo(st)) return read_pipe(path, pipe_writer_wait, too_large);
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > kMaxInputFileBytes) throw too_large();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot open '" + path + "': " + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxInputFileBytes) throw too_large();  // it grew while read
  }
  if (in.bad()) throw InputError("cannot read '" + path + "'");
  return text;
}

json read_json_file(const std::string& path) { return parse_json_text(read_text_file(path), "'" + path + "'"); }

Fields::Fields(const json& object, std::string path) : j_(object), path_(std::move(path)) {
  if (!j_.is_object())
    throw InputError("'" + (path_.empty() ? std::string("document") : path_) + "' must be an object, found " +
                     json_type_name(j_));
}

std::string Fields::path_of(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

bool Fields::has(const std::string& key) const {
  auto it = j_.find(key);
  return it != j_.end() && !it->is_null();
}

void Fields::fail(const std::string& key, const std::string& problem) const {
  throw InputError("field '" + path_of(key) + "': " + problem);
}

const json& Fields::at(const std::string& key) const {
  auto it = j_.find(key);
  if (it == j_.end() || it->is_null()) fail(key, "required but missing");
  return *it;
}

std::string Fields::string(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_string()) fail(key, "expected a string, found " + json_type_name(v));
  return v.get<std::string>();
}

std::optional<std::string> Fields::optional_string(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return string(key);
}

namespace {

// The length of the printable character at text[i] (a tab, printable ASCII or a whole UTF-8 sequence that is
// no control character), or 0 with *why (where given) set to what is wrong with the byte there.
std::size_t printable_at(const std::string& text, std::size_t i, std::string* why) {
  const auto u = static_cast<unsigned char>(text[i]);
  if (u < 0x20 || u == 0x7f) {
    if (why) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", u);
      *why = std::string("holds a control character (") + hex +
             "), which no driver, host or measurement writes; it would rewrite the terminal that prints it";
    }
    return 0;
  }
  auto invalid = [&] {
    if (why) *why = "is not valid UTF-8 (byte " + std::to_string(i) + ")";
    return std::size_t{0};
  };
  // UTF-8: a lead byte and its continuation bytes (no overlong forms, surrogates or values past U+10FFFF).
  const int extra = u < 0x80 ? 0 : (u >= 0xc2 && u <= 0xdf) ? 1 : (u >= 0xe0 && u <= 0xef) ? 2 : (u >= 0xf0 && u <= 0xf4) ? 3 : -1;
  if (extra < 0 || i + static_cast<std::size_t>(extra) >= text.size()) return invalid();
  std::uint32_t cp = extra == 0 ? u : u & (0x3f >> extra);
  for (int k = 1; k <= extra; ++k) {
    const auto c = static_cast<unsigned char>(text[i + k]);
    if ((c & 0xc0) != 0x80) return invalid();
    cp = (cp << 6) | (c & 0x3f);
  }
  if ((extra == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (extra == 3 && (cp < 0x10000 || cp > 0x10ffff)))
    return invalid();
  if (cp >= 0x80 && cp < 0xa0) {
    if (why) *why = "holds a C1 control character, which would rewrite the terminal that prints it";
    return 0;
  }
  // Noncharacters XML forbids: an SVG holding one is no XML document (review 94).
  if (cp == 0xfffe || cp == 0xffff) {
    if (why) *why = "holds the noncharacter U+FFFE or U+FFFF, which no XML (an SVG) may hold";
    return 0;
  }
  return static_cast<std::size_t>(extra) + 1;
}

}  // namespace

std::string plain_text_problem(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = printable_at(text, i, nullptr);
    if (n == 0) {
      std::string why;
      printable_at(text, i, &why);
      return why;
    }
    i += n;
  }
  return "";
}

std::string printable_text(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\t') {  // a space: a profile's reader refuses control characters, the tab too (review 89)
      out += ' ';
      ++i;
      continue;
    }
    const std::size_t n = printable_at(text, i, nullptr);
    out += n ? text.substr(i, n) : "?";
    i += n ? n : 1;
  }
  return out;
}

void require_plain_strings(const json& doc, const std::string& path) {
  if (doc.is_string()) {
    const std::string problem = plain_text_problem(doc.get_ref<const std::string&>());
    if (!problem.empty()) throw InputError("field '" + path + "': " + problem);
  } else if (doc.is_object()) {
    std::size_t n = 0;
    for (const auto& [k, v] : doc.items()) {
      const std::string problem = plain_text_problem(k);  // the key is not echoed: it is what is wrong
      if (!problem.empty()) throw InputError("field '" + path + "': its key number " + std::to_string(n) + " " + problem);
      require_plain_strings(v, path + "." + k);
      ++n;
    }
  } else if (doc.is_array()) {
    for (std::size_t i = 0; i < doc.size(); ++i) require_plain_strings(doc[i], path + "[" + std::to_string(i) + "]");
  }
}

std::string Fields::name_string(const std::string& key) const {
  std::string s = string(key);
  const std::string problem = plain_text_problem(s);
  if (!problem.empty()) fail(key, problem);
  return s;
}

std::optional<std::string> Fields::optional_name_string(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return name_string(key);
}

bool Fields::boolean(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_boolean()) fail(key, "expected true or false, found " + json_type_name(v));
  return v.get<bool>();
}

std::optional<bool> Fields::optional_boolean(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return boolean(key);
}

double Fields::number(const std::string& key, double minimum) const {
  const json& v = at(key);
  if (!v.is_number()) fail(key, "expected a number, found " + json_type_name(v));
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(key, "must be finite");
  if (d < minimum) {
    std::ostringstream os;
    os << "must be >= " << minimum << ", found " << d;
    fail(key, os.str());
  }
  return d;
}

std::optional<double> Fields::optional_number(const std::string& key, double minimum) const {
  if (!has(key)) return std::nullopt;
  return number(key, minimum);
}

std::int64_t Fields::integer(const std::string& key, std::int64_t minimum) const {
  const json& v = at(key);
  std::int64_t out = 0;
  if (v.is_number_integer() || v.is_number_unsigned()) {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
      fail(key, "is too large");
    out = v.get<std::int64_t>();
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || std::floor(d) != d) fail(key, "expected a whole number");
    // A whole number past 64 bits (2^64 is read as a double): too large, as 2^64 - 1 is.
    if (std::fabs(d) > 9.0e18) fail(key, d > 0 ? "is too large" : "is too small");
    out = static_cast<std::int64_t>(d);
  } else {
    fail(key, "expected a whole number, found " + json_type_name(v));
  }
  if (out < minimum) fail(key, "must be >= " + std::to_string(minimum) + ", found " + std::to_string(out));
  return out;
}

std::optional<std::int64_t> Fields::optional_integer(const std::string& key, std::int64_t minimum) const {
  if (!has(key)) return std::nullopt;
  return integer(key, minimum);
}

Fields Fields::object(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_object()) fail(key, "expected an object, found " + json_type_name(v));
  return Fields(v, path_of(key));
}

std::optional<Fields> Fields::optional_object(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return object(key);
}

const json& Fields::array(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_array()) fail(key, "expected an array, found " + json_type_name(v));
  return v;
}

}  // namespace ceilings
