// imgpipe_fault_proxy: a FaultProxy (testing/fault_proxy.h) in its own process, for benchmarks
// that read through a far region:
//   imgpipe_fault_proxy --upstream 127.0.0.1:9000 --latency-ms 20 --port-file proxy.port
// prints http://127.0.0.1:PORT on its own line once it listens (and writes PORT to the
// port file), then forwards until SIGTERM or SIGINT.
#include <CLI/CLI.hpp>
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <exception>
#include <string>

#include "testing/fault_proxy.h"
#include "util/file.h"

int main(int argc, char** argv) {
  std::string upstream, port_file;
  int latency_ms = 0;
  CLI::App app{"imgpipe_fault_proxy: an HTTP/1.1 proxy on 127.0.0.1 that delays requests"};
  app.add_option("--upstream", upstream, "The server to forward to, HOST:PORT")->required();
  app.add_option("--latency-ms", latency_ms, "Delay of every request, in milliseconds")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--port-file", port_file, "Write the port listened on to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  // 1. SIGTERM and SIGINT blocked before the proxy's threads start (they inherit the mask),
  // so that only sigwait below receives them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  try {
    // 2. Listen, say where, and forward until a signal comes.
    imgpipe::FaultProxy proxy(upstream);
    proxy.SetLatencyMs(latency_ms);
    if (!port_file.empty()) {
      imgpipe::WriteFileAtomic(port_file, std::to_string(proxy.port()) + "\n", false);
    }
    std::printf("%s\n", proxy.endpoint().c_str());
    std::fflush(stdout);
    int signal = 0;
    sigwait(&stop, &signal);
    std::fprintf(stderr, "imgpipe_fault_proxy: %llu requests, %llu faults; stopping\n",
                 static_cast<unsigned long long>(proxy.requests()),
                 static_cast<unsigned long long>(proxy.faults_applied()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "imgpipe_fault_proxy: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
