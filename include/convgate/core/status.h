// Status and Result<T>: how every expected failure travels in convgate.
//
// A Status is OK or carries a code and a message that names the object and the bad value
// ("input 'ids' from a.npz: dtype int32, model wants int64"). OK allocates nothing. Layers add
// context on the way up with WithContext(). Nothing in convgate throws across module boundaries;
// third-party exceptions are caught at the adapter and turned into a Status.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace convgate {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the caller passed something malformed (flag, spec, shape)
  kNotFound,            // a file, tensor or name does not exist
  kDataLoss,            // a file exists but is truncated or corrupt
  kUnimplemented,       // valid but not supported (a dtype, an npy feature)
  kFailedPrecondition,  // the inputs are well-formed but inconsistent with each other
  kUnavailable,         // a runtime or external component failed
  kInternal,            // a bug in convgate
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message);
  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string message);
  static Status NotFound(std::string message);
  static Status DataLoss(std::string message);
  static Status Unimplemented(std::string message);
  static Status FailedPrecondition(std::string message);
  static Status Unavailable(std::string message);
  static Status Internal(std::string message);

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  // Empty for OK.
  const std::string& message() const;
  // "OK" or "<CodeName>: <message>".
  std::string ToString() const;
  // Returns a copy whose message is "<context>: <message>". OK stays OK.
  Status WithContext(std::string_view context) const;

 private:
  struct State {
    StatusCode code;
    std::string message;
  };
  std::unique_ptr<State> state_;  // null means OK
};

// Holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : storage_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : storage_(std::move(status)) {  // NOLINT: implicit by design
    if (std::get<Status>(storage_).ok()) {
      storage_ = Status::Internal("Result constructed from an OK Status without a value");
    }
  }

  bool ok() const { return std::holds_alternative<T>(storage_); }
  // OK when a value is held.
  Status status() const { return ok() ? Status::OK() : std::get<Status>(storage_); }
  // REQUIRES: ok().
  T& value() & { return std::get<T>(storage_); }
  const T& value() const& { return std::get<T>(storage_); }
  T&& value() && { return std::get<T>(std::move(storage_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> storage_;
};

}  // namespace convgate

#define CONVGATE_CONCAT_INNER_(a, b) a##b
#define CONVGATE_CONCAT_(a, b) CONVGATE_CONCAT_INNER_(a, b)

#define CONVGATE_RETURN_IF_ERROR(expr)                   \
  do {                                                   \
    ::convgate::Status convgate_status_ = (expr);        \
    if (!convgate_status_.ok()) return convgate_status_; \
  } while (0)

#define CONVGATE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                    \
  if (!tmp.ok()) return tmp.status();                   \
  lhs = std::move(tmp).value()

// lhs may be a declaration: CONVGATE_ASSIGN_OR_RETURN(Tensor t, ReadNpy(path));
#define CONVGATE_ASSIGN_OR_RETURN(lhs, expr) \
  CONVGATE_ASSIGN_OR_RETURN_IMPL_(CONVGATE_CONCAT_(convgate_result_, __LINE__), lhs, expr)
