// Files for host tests: reading one whole, and a scratch directory removed
// at scope exit.
#pragma once
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace iosim::testing {

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  BOOST_REQUIRE_MESSAGE(in, "cannot read " << p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class TempDir {
 public:
  TempDir()
      : path_(std::filesystem::temp_directory_path() /
              ("iosim_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // Writes `text` to <dir>/<stem>.yaml and returns that path.
  std::filesystem::path write_yaml(const std::string& stem, const std::string& text) const {
    const std::filesystem::path p = path_ / (stem + ".yaml");
    std::ofstream(p) << text;
    return p;
  }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

}  // namespace iosim::testing
