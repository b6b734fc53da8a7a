#include "cqmgr/test/temp_dir.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <stdlib.h>

namespace cqmgr::test {

TempDir::TempDir(const std::string& name) {
    std::string tmpl = "/tmp/" + name + "-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp " + tmpl);
    path_ = tmpl;
}

// Removes what the test left, quietly: a test's own checks report its
// failures, not the cleaning up after it.
TempDir::~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return file(name);
}

std::string TempDir::read(const std::string& name) const {
    std::ifstream in(path_ / name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

InDirectory::InDirectory(const std::filesystem::path& dir) : old_(std::filesystem::current_path()) {
    std::filesystem::current_path(dir);
}

// Goes back even when the test failed, so that the next test starts where
// the runner put it.
InDirectory::~InDirectory() {
    std::error_code ec;
    std::filesystem::current_path(old_, ec);
}

} // namespace cqmgr::test
