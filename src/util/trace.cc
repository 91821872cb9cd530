#include "util/trace.h"

#include <unistd.h>

#include <memory>
#include <mutex>
#include <vector>

#include "util/file.h"

namespace imgpipe::trace {
namespace {

#ifdef IMGPIPE_HAVE_NVTX
// NVTX initialises itself lazily on the first range, racily when that happens on
// several threads at once; initialising at load time, before any thread, avoids it.
[[maybe_unused]] const bool kNvtxInitialised = (nvtxInitialize(nullptr), true);
#endif

struct Event {
  std::string name;  // a copy: stage names may die before the trace is written
  int64_t start_us;
  int64_t duration_us;
};

// One thread's events; owned by the global list so they outlive the thread.
struct ThreadEvents {
  int tid = 0;
  std::string name;
  std::mutex mu;
  std::vector<Event> events;  // guarded by mu
};

struct Recorder {
  std::mutex mu;
  std::vector<std::unique_ptr<ThreadEvents>> threads;  // guarded by mu
  std::chrono::steady_clock::time_point origin = std::chrono::steady_clock::now();
};

Recorder& GlobalRecorder() {
  static Recorder* recorder = new Recorder();  // never destroyed: threads may outlive main
  return *recorder;
}

ThreadEvents& ThisThread() {
  thread_local ThreadEvents* mine = [] {
    Recorder& r = GlobalRecorder();
    std::lock_guard<std::mutex> lock(r.mu);
    r.threads.push_back(std::make_unique<ThreadEvents>());
    r.threads.back()->tid = static_cast<int>(r.threads.size());
    return r.threads.back().get();
  }();
  return *mine;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out + "\"";
}

}  // namespace

void Enable() {
  Recorder& r = GlobalRecorder();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    for (auto& t : r.threads) {
      std::lock_guard<std::mutex> thread_lock(t->mu);
      t->events.clear();
    }
    r.origin = std::chrono::steady_clock::now();
  }
  EnabledFlag() = true;
}

void Disable() { EnabledFlag() = false; }

void Record(const char* name, std::chrono::steady_clock::time_point start,
            std::chrono::steady_clock::time_point end) {
  ThreadEvents& t = ThisThread();
  auto origin = GlobalRecorder().origin;
  using std::chrono::duration_cast;
  using std::chrono::microseconds;
  std::lock_guard<std::mutex> lock(t.mu);
  t.events.push_back({name, duration_cast<microseconds>(start - origin).count(),
                      duration_cast<microseconds>(end - start).count()});
}

void SetThreadName(const std::string& name) {
  ThreadEvents& t = ThisThread();
  std::lock_guard<std::mutex> lock(t.mu);
  t.name = name;
}

size_t WriteChromeTrace(const std::string& path) {
  Recorder& r = GlobalRecorder();
  std::string out = "{\"traceEvents\":[\n";
  size_t count = 0;
  int pid = static_cast<int>(::getpid());
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto& t : r.threads) {
    std::lock_guard<std::mutex> thread_lock(t->mu);
    if (t->events.empty()) continue;
    if (!t->name.empty()) {
      out += "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(pid) +
             ",\"tid\":" + std::to_string(t->tid) + ",\"args\":{\"name\":" + JsonString(t->name) +
             "}},\n";
    }
    for (const Event& e : t->events) {
      out += "{\"ph\":\"X\",\"name\":" + JsonString(e.name) + ",\"pid\":" + std::to_string(pid) +
             ",\"tid\":" + std::to_string(t->tid) + ",\"ts\":" + std::to_string(e.start_us) +
             ",\"dur\":" + std::to_string(e.duration_us) + "},\n";
      ++count;
    }
  }
  if (out.size() > 2 && out[out.size() - 2] == ',') out.erase(out.size() - 2, 1);
  out += "],\"displayTimeUnit\":\"ms\"}\n";
  WriteFileAtomic(path, out);
  return count;
}

}  // namespace imgpipe::trace
