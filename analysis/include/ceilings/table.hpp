// One table type for everything the CLI prints, rendered as aligned text, markdown, csv or json.
#pragma once
#include <string>
#include <vector>

#include "ceilings/json_fields.hpp"

namespace ceilings {

enum class Format { kTable, kMarkdown, kCsv, kJson };
// "table" | "markdown" | "csv" | "json"; anything else is an InputError.
Format parse_format(const std::string& name);

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> right_aligned;  // per column; numbers read better right-aligned

  void add_row(std::vector<std::string> row) { rows.push_back(std::move(row)); }
};

// kJson renders an array of objects keyed by column name (strings as shown).
std::string render(const Table& table, Format format);
// Text as markdown shows it literally: '|', '\\', '*', '_' and '`' escaped, '<' and '>' as entities (a cell's, or a
// line of a report between its tables: no emphasis, code span or HTML from a name or a path a user gave).
std::string markdown_text(const std::string& text);

}  // namespace ceilings
