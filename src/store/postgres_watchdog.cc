#include "store/postgres_watchdog.h"

#include <sys/socket.h>

namespace convgate::store {

Watchdog::Watchdog(std::chrono::milliseconds deadline)
    : deadline_(deadline), thread_([this] { Loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void Watchdog::Arm(int socket) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    socket_ = socket;
    armed_ = socket >= 0;
    fired_ = false;
    expires_ = std::chrono::steady_clock::now() + deadline_;
  }
  changed_.notify_all();
}

bool Watchdog::Disarm() {
  std::lock_guard<std::mutex> lock(mutex_);
  armed_ = false;
  return fired_;
}

bool Watchdog::Fired() {
  std::lock_guard<std::mutex> lock(mutex_);
  return fired_;
}

void Watchdog::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    if (!armed_) {
      changed_.wait(lock);
      continue;
    }
    // Woken early by Disarm, a new Arm or a spurious wake-up: the loop looks again.
    changed_.wait_until(lock, expires_);
    if (stop_ || !armed_ || std::chrono::steady_clock::now() < expires_) continue;
    // shutdown, not close: the descriptor stays libpq's, and its poll() returns at once.
    ::shutdown(socket_, SHUT_RDWR);
    fired_ = true;
    armed_ = false;
  }
}

}  // namespace convgate::store
