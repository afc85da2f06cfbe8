// Expected failures travel as values: Error says what went wrong, where, and which exit
// status it maps to; Result<T> carries either a value or an Error. See docs/errors.md.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <variant>

namespace preflight {

// A place in a user's file; line and column are 1-based, 0 when unknown.
struct SourceLocation {
  std::filesystem::path file;
  int line = 0;
  int column = 0;

  bool known() const { return !file.empty(); }
  std::string str() const;  // "job.yaml:12:5", "job.yaml:12", "job.yaml" or ""
};

// Which party is at fault decides the exit status (docs/errors.md).
enum class ErrorKind {
  BadInput,     // the user's spec, profile, image reference or archive: exit 2
  Runtime,      // Preflight could not run the job (runtime missing, unpack failed): exit 3
  Interrupted,  // the user stopped the run (Ctrl-C, SIGTERM): exit 130, as a shell reports it
};

struct Error {
  ErrorKind kind = ErrorKind::BadInput;
  std::string message;
  SourceLocation where;

  static Error bad_input(std::string message, SourceLocation where = {}) {
    return Error{ErrorKind::BadInput, std::move(message), std::move(where)};
  }
  static Error runtime(std::string message) { return Error{ErrorKind::Runtime, std::move(message), {}}; }

  // Adds one short clause of context as the error travels up: "loading image: <message>".
  Error& context(const std::string& clause) {
    message = clause + ": " + message;
    return *this;
  }

  int exit_status() const {
    switch (kind) {
      case ErrorKind::BadInput:
        return 2;
      case ErrorKind::Runtime:
        return 3;
      case ErrorKind::Interrupted:
        return 130;
    }
    return 3;
  }
  // "job.yaml:12:5: unknown key ..." — the form every user-facing error takes.
  std::string str() const;
};

// A value or an Error. Deliberately small: ok(), value(), error(), and operator* / ->.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  Error& error() & { return std::get<1>(state_); }
  const Error& error() const& { return std::get<1>(state_); }
  Error&& error() && { return std::get<1>(std::move(state_)); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Error> state_;
};

// Result<void>: success carries nothing.
struct Ok {};
using Status = Result<Ok>;

}  // namespace preflight
