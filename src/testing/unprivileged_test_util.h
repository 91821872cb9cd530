// For tests of unreadable files. Root reads a file whatever its mode, and tests run as
// root in CI; so a test that makes a file unreadable does the reading in a child process
// that first drops to the unprivileged user 'nobody' (uid and gid 65534) when this
// process is root. As any other user, the child just runs with the same rights.
#pragma once

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <exception>
#include <functional>
#include <string>

#include "util/error.h"

namespace imgpipe {

inline constexpr uid_t kUnprivilegedId = 65534;  // 'nobody' / 'nogroup' on Debian

// When root, switches this process to kUnprivilegedId for good (groups, gid, then
// uid); returns false when that fails. For a child between fork and its work or exec.
inline bool DropRootPrivileges() {
  if (::geteuid() != 0) return true;
  return ::setgroups(0, nullptr) == 0 && ::setgid(kUnprivilegedId) == 0 &&
         ::setuid(kUnprivilegedId) == 0 && ::geteuid() == kUnprivilegedId;
}

// Mode 000: no one but root may read `path`.
inline void MakeUnreadable(const std::string& path) {
  if (::chmod(path.c_str(), 0) != 0) throw IoError(path, "chmod", errno);
}

// Mode 0777, so that the child of RunUnprivileged may write into folder `path`.
inline void MakeWritableByAnyone(const std::string& path) {
  if (::chmod(path.c_str(), 0777) != 0) throw IoError(path, "chmod", errno);
}

struct UnprivilegedResult {
  int status = -1;      // fn's return value; 128 + signal when the child was killed
  std::string message;  // what fn wrote to *message, or the exception that ended it
};

// Runs `fn` in a forked child without root's privileges (see DropRootPrivileges) and
// returns its result. An exception escaping `fn` gives status 255 and its what();
// failing to drop privileges gives status 254.
inline UnprivilegedResult RunUnprivileged(const std::function<int(std::string* message)>& fn) {
  int fds[2];
  if (::pipe(fds) != 0) throw IoError("pipe", "pipe", errno);
  pid_t pid = ::fork();
  if (pid < 0) throw IoError("fork", "fork", errno);
  if (pid == 0) {
    // 1. The child: drop privileges, run, send the message, and leave without running
    //    the parent's exit handlers.
    ::close(fds[0]);
    std::string message;
    int status = 254;
    if (!DropRootPrivileges()) {
      message = "could not switch to uid " + std::to_string(kUnprivilegedId);
    } else {
      try {
        status = fn(&message);
      } catch (const std::exception& e) {
        message = e.what();
        status = 255;
      }
    }
    for (size_t done = 0; done < message.size();) {
      ssize_t n = ::write(fds[1], message.data() + done, message.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::_exit(status & 0xff);
  }
  // 2. The parent: read the message to its end, then reap the child.
  ::close(fds[1]);
  UnprivilegedResult result;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buffer, sizeof(buffer))) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    result.message.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  result.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return result;
}

}  // namespace imgpipe
