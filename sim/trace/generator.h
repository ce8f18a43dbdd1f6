// A minimal C++20 coroutine generator (std::generator is C++23). Each CTA's
// trace is a coroutine, so the code that emits it reads like the algorithm's
// loop nest and the engine can pull steps from many CTAs in time order.
#pragma once
#include <coroutine>
#include <exception>
#include <utility>

namespace iosim::trace {

template <typename T>
class Generator {
 public:
  struct promise_type {
    const T* current = nullptr;
    std::exception_ptr error;
    Generator get_return_object() { return Generator{Handle::from_promise(*this)}; }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    std::suspend_always yield_value(const T& value) noexcept {
      current = &value;
      return {};
    }
    void return_void() noexcept {}
    void unhandled_exception() { error = std::current_exception(); }
  };
  using Handle = std::coroutine_handle<promise_type>;

  Generator() = default;
  explicit Generator(Handle h) : handle_(h) {}
  Generator(Generator&& o) noexcept : handle_(std::exchange(o.handle_, {})) {}
  Generator& operator=(Generator&& o) noexcept {
    if (this != &o) {
      reset();
      handle_ = std::exchange(o.handle_, {});
    }
    return *this;
  }
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;
  ~Generator() { reset(); }

  // Advances to the next value; false when the coroutine has finished.
  bool next() {
    if (!handle_ || handle_.done()) return false;
    handle_.resume();
    if (handle_.promise().error) std::rethrow_exception(handle_.promise().error);
    return !handle_.done();
  }
  const T& value() const { return *handle_.promise().current; }

 private:
  void reset() {
    if (handle_) handle_.destroy();
    handle_ = {};
  }
  Handle handle_{};
};

}  // namespace iosim::trace
