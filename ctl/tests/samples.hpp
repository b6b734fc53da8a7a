// The sample replies of docs/control-protocol.md, kept in tests/samples/,
// and a temporary directory for the tests that need files.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

namespace cqmgr::ctl::test {

// The sample reply `name` (tests/samples/NAME.json).
inline nlohmann::json sample(const std::string& name) {
    std::ifstream in(std::string(CTL_SAMPLES) + "/" + name + ".json");
    if (!in) throw std::runtime_error("no sample " + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return nlohmann::json::parse(ss.str());
}

// A directory under /tmp, removed with its files when the object goes away.
class TempDir {
  public:
    TempDir() {
        char tmpl[] = "/tmp/ctl-test-XXXXXX";
        if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp");
        path_ = tmpl;
    }
    ~TempDir() {
        const std::string cmd = "rm -rf '" + path_ + "'";
        if (std::system(cmd.c_str()) != 0) {
        }
    }
    const std::string& path() const { return path_; }
    // Writes `text` to the file `name` in the directory, dated a minute
    // back: Postfix rereads a file changed within the last second until it
    // is a second old (it might still be being written), which would make
    // each postconf run take a second or more.
    void write(const std::string& name, const std::string& text) const {
        const std::string file = path_ + "/" + name;
        std::ofstream(file) << text;
        const timeval past[2] = {{::time(nullptr) - 60, 0}, {::time(nullptr) - 60, 0}};
        ::utimes(file.c_str(), past);
    }

  private:
    std::string path_;
};

} // namespace cqmgr::ctl::test
