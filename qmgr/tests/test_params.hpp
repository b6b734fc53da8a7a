// main.cf text read as the daemon reads it, for the daemon's unit tests
// (no account checks, host name "vm").
#pragma once

#include "cqmgr/conf/main_cf.hpp"
#include "cqmgr/conf/param_table.hpp"
#include "cqmgr/conf/qmgr_params.hpp"

#include <gtest/gtest.h>
#include <string>

namespace cqmgr::qmgr::testing {

struct Config {
    conf::MainCf cf;
    conf::QmgrParams params;

    explicit Config(const std::string& text = "") {
        conf::register_defaults(cf, "vm");
        EXPECT_TRUE(cf.load_text(text, "/etc/postfix/main.cf")) << cf.error();
        params = conf::QmgrParams::load(cf, {}, conf::QmgrParams::Options{false, false});
    }
};

// The parameters of main.cf `text`.
inline conf::QmgrParams params(const std::string& text = "") {
    return Config(text).params;
}

} // namespace cqmgr::qmgr::testing
