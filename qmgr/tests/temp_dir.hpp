// A scratch directory for one test, under /tmp, removed with everything in
// it when the test ends.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <stdlib.h>
#include <string>

namespace cqmgr::qmgr {

class TempDir {
  public:
    // Makes /tmp/<prefix>-XXXXXX.
    explicit TempDir(const std::string& prefix) {
        std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
        if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp " + tmpl);
        path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::filesystem::path& path() const { return path_; }
    // The directory's name, or that of `name` in it.
    std::string str() const { return path_.string(); }
    std::string file(const std::string& name) const { return (path_ / name).string(); }
    // Writes `text` to `name` in the directory; returns the file's name.
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(path_ / name) << text;
        return file(name);
    }
    // The contents of `name` in the directory ("" when it is missing).
    std::string read(const std::string& name) const {
        std::ifstream in(path_ / name);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }

  private:
    std::filesystem::path path_;
};

} // namespace cqmgr::qmgr
