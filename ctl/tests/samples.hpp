// The sample replies of docs/control-protocol.md, kept in tests/samples/,
// and files for postconf in the tests' scratch directory.
#pragma once

#include "cqmgr/test/temp_dir.hpp"

#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/time.h>

namespace cqmgr::ctl::test {

// The sample reply `name` (tests/samples/NAME.json).
inline nlohmann::json sample(const std::string& name) {
    std::ifstream in(std::string(CTL_SAMPLES) + "/" + name + ".json");
    if (!in) throw std::runtime_error("no sample " + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return nlohmann::json::parse(ss.str());
}

// Writes `text` to the file `name` in `dir`, dated a minute back: Postfix
// rereads a file changed within the last second until it is a second old
// (it might still be being written), which would make each postconf run
// take a second or more.
inline void write_settled(const cqmgr::test::TempDir& dir, const std::string& name,
                          const std::string& text) {
    const std::string file = dir.write(name, text);
    const timeval past[2] = {{::time(nullptr) - 60, 0}, {::time(nullptr) - 60, 0}};
    ::utimes(file.c_str(), past);
}

} // namespace cqmgr::ctl::test
