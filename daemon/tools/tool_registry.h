// The tools a session offers the model, by name, in a fixed order (the order of the schemas
// in every request, so it must not change between requests: providers cache the prefix).
// Immutable once built; thread-safe to share. Move-only.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "daemon/tools/tool.h"

namespace agent::daemon::tools {

class ToolRegistry {
 public:
  ToolRegistry() = default;
  ToolRegistry(ToolRegistry&&) = default;
  ToolRegistry& operator=(ToolRegistry&&) = default;
  ToolRegistry(const ToolRegistry&) = delete;
  ToolRegistry& operator=(const ToolRegistry&) = delete;

  // read_file, list_dir, find_files, search, write_file, edit_file, bash, update_plan.
  static ToolRegistry CreateCore();

  // Adds a tool after the others; a tool whose name is taken replaces the old one in place.
  void Add(std::unique_ptr<Tool> tool);

  // nullptr for an unknown name.
  const Tool* Find(std::string_view name) const;
  // The schemas as a JSON array, in registration order.
  Json Schemas() const;
  // True for a known tool that is not gated (may run concurrently with other read-only calls).
  bool IsReadOnly(std::string_view name) const;
  std::vector<std::string_view> Names() const;

 private:
  std::vector<std::unique_ptr<Tool>> tools_;
};

}  // namespace agent::daemon::tools
