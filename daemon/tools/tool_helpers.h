// Pieces every tool uses: the OpenAI function-schema envelope, the base of a core tool declared
// by its name, gate and schema, and turning a Status into what the model is told. Thread-safe.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "common/json.h"
#include "daemon/tools/tool.h"

namespace agent::daemon::tools {

// {"type":"function","function":{"name","description","parameters":{"type":"object",
// "properties", "required", "additionalProperties":false}}}; "required" only when non-empty.
Json FunctionSchema(std::string_view name, std::string_view description, Json properties,
                    std::initializer_list<std::string_view> required);

// {"type": type, "description": description}; no description when it is empty.
Json Property(std::string_view type, std::string_view description = {});

// A core tool as the model sees it: its name, whether a person may be asked before each call
// (gated), and its parameters. The tool itself writes only how it runs.
class DeclaredTool : public Tool {
 public:
  DeclaredTool(std::string_view name, bool gated, std::string_view description, Json properties,
               std::initializer_list<std::string_view> required)
      : DeclaredTool(name, gated,
                     FunctionSchema(name, description, std::move(properties), required)) {}
  DeclaredTool(std::string_view name, bool gated, Json schema)
      : name_(name), gated_(gated), schema_(std::move(schema)) {}

  std::string_view Name() const final { return name_; }
  bool Gated() const final { return gated_; }
  Json Schema() const final { return schema_; }

 protected:
  // What the model is told of a run: its text or outcome, or the error that ended it.
  static ToolOutcome Answer(absl::StatusOr<std::string> text);
  static ToolOutcome Answer(absl::StatusOr<ToolOutcome> outcome);

 private:
  const std::string name_;
  const bool gated_;
  const Json schema_;
};

// A declared tool whose run gives text, or an error the model is told.
class TextTool : public DeclaredTool {
 public:
  using DeclaredTool::DeclaredTool;
  ToolOutcome Run(const Json& args, ToolContext& ctx) const final {
    return Answer(RunText(args, ctx));
  }

 private:
  virtual absl::StatusOr<std::string> RunText(const Json& args, ToolContext& ctx) const = 0;
};

// The status message, marked as an error. The model reads it and corrects its call.
// Made valid UTF-8 (it may name a file whose name is not).
ToolOutcome ErrorOutcome(const absl::Status& status);

// A successful result. `text` is made valid UTF-8 (invalid bytes become U+FFFD): file
// contents and names need not be, and everything that enters the transcript must.
ToolOutcome TextOutcome(std::string text);

}  // namespace agent::daemon::tools
