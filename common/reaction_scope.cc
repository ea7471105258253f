#include "common/reaction_scope.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace agent {
namespace {

thread_local int t_depth = 0;

}  // namespace

ReactionScope::ReactionScope() { ++t_depth; }
ReactionScope::~ReactionScope() { --t_depth; }
bool ReactionScope::Active() { return t_depth > 0; }

void CheckNotInReaction(std::string_view what, std::string_view path) {
#ifndef NDEBUG
  if (t_depth == 0) return;
  std::fprintf(stderr, "agentd: %s %s on a gRPC callback thread: disk work belongs on a worker\n",
               std::string(what).c_str(), std::string(path).c_str());
  std::abort();
#else
  (void)what;
  (void)path;
#endif
}

}  // namespace agent
