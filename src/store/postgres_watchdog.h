// Cuts off a store call that a PostgreSQL server never answers.
//
// libpq waits in poll() for as long as the socket stays open, and a frozen server (stopped with
// SIGSTOP, swapped out, behind a partition that sends no reset) keeps it open forever.
// statement_timeout runs in the server, so it cannot help, and TCP keepalives do not apply to a
// unix socket. A watchdog thread shuts the connection's socket down when a call outlives its
// deadline: the blocked call then fails in libpq as a lost connection, and Disarm says that the
// watchdog did it, so the caller can name the deadline instead of "connection lost".
//
// Thread safety: Arm and Disarm are called by the one thread that uses the connection; the
// watchdog's own thread only reads what they set, under the mutex.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace convgate::store {

class Watchdog {
 public:
  explicit Watchdog(std::chrono::milliseconds deadline);
  ~Watchdog();  // stops and joins the thread
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Starts the deadline of one call on `socket` (a connected socket, or -1: nothing to cut).
  void Arm(int socket);
  // Ends the call's deadline; true when it had expired and the socket was shut down.
  bool Disarm();
  // Whether the call armed last was cut off (until the next Arm).
  bool Fired();
  std::chrono::milliseconds deadline() const { return deadline_; }

 private:
  void Loop();

  const std::chrono::milliseconds deadline_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_ = false;
  bool armed_ = false;
  bool fired_ = false;
  int socket_ = -1;
  std::chrono::steady_clock::time_point expires_;
  std::thread thread_;  // last: starts once every member above exists
};

}  // namespace convgate::store
