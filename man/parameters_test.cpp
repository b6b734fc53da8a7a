// cqmgr(8) has an entry for each of cqmgr's own parameters, with the
// default the parameter table gives it, and names each per-transport form.
#include "cqmgr/conf/param_table.hpp"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>

namespace {

using namespace cqmgr::conf;

// The text of cqmgr(8).
std::string man_page() {
    std::ifstream in(CQMGR_MAN_PAGE);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// `text` as roff prints it literally: hyphens escaped.
std::string roff(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (c == '-') out += '\\';
        out += c;
    }
    return out;
}

TEST(ManPage, EveryCqmgrParameterWithItsDefault) {
    std::string page = man_page();
    ASSERT_FALSE(page.empty()) << CQMGR_MAN_PAGE;
    ASSERT_FALSE(cqmgr_params().empty());
    for (const ParamSpec& p : cqmgr_params()) {
        std::string entry = "\\fB" + std::string(p.name) + "\\fR (default: " +
                            (p.def.empty() ? std::string("empty") : roff(p.def)) + ")";
        EXPECT_NE(page.find(entry), std::string::npos) << "cqmgr(8) has no entry " << entry;
    }
}

TEST(ManPage, EveryPerTransportForm) {
    std::string page = man_page();
    for (const TransportSuffix& s : cqmgr_transport_suffixes()) {
        std::string form = "\\fItransport\\fB" + std::string(s.suffix) + "\\fR";
        EXPECT_NE(page.find(form), std::string::npos) << "cqmgr(8) does not name " << form;
    }
}

} // namespace
