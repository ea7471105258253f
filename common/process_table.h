// The processes of this machine as /proc shows them: enough to find a process group's live
// members and a process's descendants, including those that left its group with setsid.
#pragma once

#include <sys/types.h>

#include <vector>

namespace agent {

struct ProcessEntry {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t pgrp = 0;
  char state = 0;  // 'R', 'S', 'Z', …
};

// Every process /proc lists now; empty when /proc cannot be read. Processes come and go while
// it is read: a snapshot, good for killing what it names, not for counting.
std::vector<ProcessEntry> ReadProcessTable();

// The descendants of `root` in `table` (children, theirs, …), not `root` itself. A process
// whose parent died was re-parented (to init or a subreaper) and is no longer found here.
std::vector<pid_t> Descendants(const std::vector<ProcessEntry>& table, pid_t root);

}  // namespace agent
