// Errors by layer: configuration and input problems are exceptions carrying
// what was wrong, where, and what would be valid; only the CLI turns them into
// an exit code.
#pragma once
#include <stdexcept>
#include <string>

namespace iosim {

// Bad user input: a flag, a profile file, a mask file, a tiling that does not fit.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace iosim
