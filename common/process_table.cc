#include "common/process_table.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"

namespace agent {

std::vector<ProcessEntry> ReadProcessTable() {
  std::vector<ProcessEntry> table;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return table;
  while (dirent* e = ::readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const std::string path = absl::StrCat("/proc/", e->d_name, "/stat");
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // gone since readdir
    char buf[512];
    ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
    ::close(fd);
    if (n <= 0) continue;
    buf[n] = '\0';
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    const char* close_paren = std::strrchr(buf, ')');
    if (close_paren == nullptr) continue;
    ProcessEntry p;
    long ppid = 0, pgrp = 0;
    if (std::sscanf(close_paren + 1, " %c %ld %ld", &p.state, &ppid, &pgrp) != 3) continue;
    p.pid = static_cast<pid_t>(std::atol(e->d_name));
    p.ppid = static_cast<pid_t>(ppid);
    p.pgrp = static_cast<pid_t>(pgrp);
    table.push_back(p);
  }
  ::closedir(proc);
  return table;
}

std::vector<pid_t> Descendants(const std::vector<ProcessEntry>& table, pid_t root) {
  std::multimap<pid_t, pid_t> children;
  for (const ProcessEntry& p : table) children.emplace(p.ppid, p.pid);
  std::vector<pid_t> out;
  std::vector<pid_t> todo = {root};
  // Bounded by the table: a pid is a child of one parent, so each is visited once.
  while (!todo.empty() && out.size() < table.size()) {
    pid_t parent = todo.back();
    todo.pop_back();
    auto [begin, end] = children.equal_range(parent);
    for (auto it = begin; it != end; ++it) {
      out.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return out;
}

}  // namespace agent
