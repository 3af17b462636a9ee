// Typed, validating JSON field access with path-naming errors.
#include "ceilings/json_fields.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

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

json parse_json_text(const std::string& text, const std::string& what) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw InputError(what + " is empty");
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(what + " is not valid JSON (truncated or corrupt?): " + e.what());
  }
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot open '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError("cannot read '" + path + "'");
  return text.str();
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
    if (!std::isfinite(d) || std::floor(d) != d || std::fabs(d) > 9.0e18) fail(key, "expected a whole number");
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
