#include "daemon/tools/tool_input.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/tools/text_util.h"

namespace agent::daemon::tools {
namespace {

// Deeper schemas (an MCP server's) are taken as they are below this depth.
constexpr int kMaxDepth = 32;

struct Checker {
  std::string_view tool;

  absl::Status Error(const std::string& where, std::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(tool.empty() ? "" : AbslView(tool),
                                                   tool.empty() ? "" : ": ", "argument \"", where,
                                                   "\" ", AbslView(what)));
  }

  static std::vector<std::string> Types(const Json& schema) {
    std::vector<std::string> out;
    auto it = schema.find("type");
    if (it == schema.end()) return out;
    if (it->is_string()) out.push_back(it->get<std::string>());
    if (it->is_array()) {
      for (const Json& t : *it) {
        if (t.is_string()) out.push_back(t.get<std::string>());
      }
    }
    return out;
  }

  static bool Is(const Json& v, const std::string& type) {
    if (type == "string") return v.is_string();
    if (type == "boolean") return v.is_boolean();
    if (type == "integer") return v.is_number_integer() || v.is_number_unsigned();
    if (type == "number") return v.is_number();
    if (type == "object") return v.is_object();
    if (type == "array") return v.is_array();
    if (type == "null") return v.is_null();
    return true;  // a type we do not know constrains nothing
  }

  // `v` as `type`, when one of the coercions above makes it one.
  static bool Coerce(Json* v, const std::string& type) {
    if (type == "boolean" && v->is_string()) {
      const std::string& s = v->get_ref<const std::string&>();
      if (s != "true" && s != "false") return false;
      *v = s == "true";
      return true;
    }
    if (type == "integer") {
      if (v->is_number_float()) {
        const double d = v->get<double>();
        if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) >= 9e15) return false;
        *v = static_cast<int64_t>(d);
        return true;
      }
      if (v->is_string()) {
        int64_t n;
        if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(v->get_ref<const std::string&>()), &n)) {
          return false;
        }
        *v = n;
        return true;
      }
      return false;
    }
    if (type == "number" && v->is_string()) {
      double d;
      if (!absl::SimpleAtod(absl::StripAsciiWhitespace(v->get_ref<const std::string&>()), &d) ||
          !std::isfinite(d)) {
        return false;
      }
      *v = d;
      return true;
    }
    return false;
  }

  absl::Status CheckType(const Json& schema, const std::string& where, Json* v) const {
    const std::vector<std::string> types = Types(schema);
    if (types.empty()) return absl::OkStatus();
    for (const std::string& t : types) {
      // An unsigned integer past int64 is no integer any reader here can hold.
      if (t == "integer" && v->is_number_unsigned() && v->get<uint64_t>() > INT64_MAX) continue;
      if (Is(*v, t)) return absl::OkStatus();
    }
    for (const std::string& t : types) {
      if (Coerce(v, t)) return absl::OkStatus();
    }
    std::vector<std::string> wanted;
    for (const std::string& t : types) {
      wanted.push_back(t == "integer" || t == "object" || t == "array" ? "an " + t : "a " + t);
    }
    return Error(where,
                 absl::StrCat("must be ", absl::StrJoin(wanted, " or "), ", got ", v->type_name()));
  }

  absl::Status Check(const Json& schema, const std::string& where, Json* v, int depth) const {
    if (!schema.is_object() || depth > kMaxDepth) return absl::OkStatus();
    if (absl::Status s = CheckType(schema, where, v); !s.ok()) return s;
    if (auto e = schema.find("enum"); e != schema.end() && e->is_array()) {
      bool found = false;
      for (const Json& allowed : *e) found = found || allowed == *v;
      if (!found) {
        std::vector<std::string> names;
        for (const Json& allowed : *e) names.push_back(DumpJson(allowed));
        return Error(where, absl::StrCat("must be one of ", absl::StrJoin(names, ", ")));
      }
    }
    if (v->is_object()) return CheckObject(schema, where, v, depth);
    if (v->is_array()) {
      auto items = schema.find("items");
      if (items == schema.end() || !items->is_object()) return absl::OkStatus();
      for (size_t i = 0; i < v->size(); ++i) {
        if (absl::Status s = Check(*items, absl::StrCat(where, "[", i, "]"), &(*v)[i], depth + 1);
            !s.ok()) {
          return s;
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckObject(const Json& schema, const std::string& where, Json* v, int depth) const {
    static const Json kNone = Json::object();
    auto p = schema.find("properties");
    const Json& properties = p != schema.end() && p->is_object() ? *p : kNone;
    auto extra = schema.find("additionalProperties");
    const bool closed = extra != schema.end() && extra->is_boolean() && !extra->get<bool>();
    const std::string prefix = where.empty() ? "" : where + ".";
    for (auto it = v->begin(); it != v->end();) {
      auto declared = properties.find(it.key());
      if (it->is_null() || (closed && declared == properties.end())) {
        it = v->erase(it);
        continue;
      }
      if (declared != properties.end()) {
        if (absl::Status s = Check(*declared, prefix + it.key(), &it.value(), depth + 1); !s.ok()) {
          return s;
        }
      }
      ++it;
    }
    if (auto r = schema.find("required"); r != schema.end() && r->is_array()) {
      for (const Json& name : *r) {
        if (name.is_string() && !v->contains(name.get<std::string>())) {
          return absl::InvalidArgumentError(
              absl::StrCat(tool.empty() ? "" : AbslView(tool), tool.empty() ? "" : ": ",
                           "missing required argument \"", prefix, name.get<std::string>(), "\""));
        }
      }
    }
    return absl::OkStatus();
  }
};

}  // namespace

absl::StatusOr<Json> CheckAgainstSchema(const Json& parameters, Json args, std::string_view tool) {
  if (!args.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("arguments must be a JSON object, got ", args.type_name()));
  }
  static const Json kAny = Json::object();
  Checker checker{tool};
  if (absl::Status s =
          checker.CheckObject(parameters.is_object() ? parameters : kAny, "", &args, 0);
      !s.ok()) {
    return s;
  }
  return args;
}

absl::StatusOr<Json> CheckToolInput(const Tool& tool, Json args) {
  const Json schema = tool.Schema();
  static const Json kAny = Json::object();
  const Json* parameters = &kAny;
  if (auto f = schema.find("function"); f != schema.end() && f->is_object()) {
    if (auto p = f->find("parameters"); p != f->end()) parameters = &*p;
  }
  return CheckAgainstSchema(*parameters, std::move(args), tool.Name());
}

}  // namespace agent::daemon::tools
