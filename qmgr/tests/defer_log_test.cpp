// The defer log as the defer service writes it (two records of an SMTP
// agent's RCPT deferrals, the first with the old-style line that
// backwards_bounce_logfile_compatibility adds), a record cut short, and the
// file helpers.
#include "defer_log.hpp"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace cqmgr::qmgr;

namespace {
const char* const two_records = "\n"
                                "<bob@dest.example>: host mx[192.0.2.1] said: 450 4.7.1 Error: too "
                                "much mail from 192.0.2.9 (in reply to MAIL FROM command)\n"
                                "recipient=bob@dest.example\n"
                                "offset=254\n"
                                "notify_flags=0\n"
                                "status=4.7.1\n"
                                "action=delayed\n"
                                "diag_type=smtp\n"
                                "diag_text=450 4.7.1 Error: too much mail from 192.0.2.9\n"
                                "mta_type=dns\n"
                                "mta_mname=mx\n"
                                "reason=host mx[192.0.2.1] said: 450 4.7.1 Error: too much mail "
                                "from 192.0.2.9 (in reply to MAIL FROM command)\n"
                                "\n"
                                "\n"
                                "recipient=carol@dest.example\n"
                                "offset=290\n"
                                "status=4.2.0\n"
                                "action=delayed\n"
                                "reason=host mx[192.0.2.1] said: 450 4.2.0 Greylisted\n"
                                "\n";
} // namespace

TEST(DeferLog, ParsesRecords) {
    auto recs = parse_defer_records(two_records);
    ASSERT_EQ(recs.size(), 2u);
    EXPECT_EQ(recs[0].offset, 254);
    EXPECT_EQ(recs[0].status, "4.7.1");
    EXPECT_EQ(recs[0].reason, "host mx[192.0.2.1] said: 450 4.7.1 Error: too much mail from "
                              "192.0.2.9 (in reply to MAIL FROM command)");
    EXPECT_EQ(recs[1].offset, 290);
    EXPECT_EQ(recs[1].status, "4.2.0");
}

TEST(DeferLog, LeavesOutARecordCutShort) {
    std::string text = two_records;
    text.resize(text.size() - 1); // the closing blank line is not there yet
    EXPECT_EQ(parse_defer_records(text).size(), 1u);
    text.resize(text.size() - 5); // nor the end of the reason line
    EXPECT_EQ(parse_defer_records(text).size(), 1u);
    EXPECT_TRUE(parse_defer_records("").empty());
}

TEST(DeferLog, FileHelpers) {
    char path[] = "/tmp/defer_log_XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    std::ofstream(path) << two_records;
    int64_t size = file_size(path);
    EXPECT_EQ(size, static_cast<int64_t>(std::string(two_records).size()));
    EXPECT_EQ(read_from(path, 0, 1 << 20), two_records);
    // From a mark on: only what came later.
    std::string tail = read_from(path, size - 20, 1 << 20);
    EXPECT_EQ(tail.size(), 20u);
    EXPECT_EQ(read_from(path, 0, 10).size(), 10u);
    std::remove(path);
    EXPECT_EQ(file_size(path), 0);
    EXPECT_EQ(read_from(path, 0, 10), "");
}

// An offset too long for 64 bits is no offset (it matches no recipient),
// not a wrapped number (signed overflow: undefined behaviour).
TEST(DeferLog, OffsetThatOverflowsIsNone) {
    auto recs = parse_defer_records("\nrecipient=bob@dest.example\n"
                                    "offset=99999999999999999999999\nstatus=4.2.0\n\n"
                                    "\nrecipient=carol@dest.example\n"
                                    "offset=9223372036854775807\nstatus=4.2.0\n\n"
                                    "\nrecipient=dave@dest.example\n"
                                    "offset=-5\nstatus=4.2.0\n\n");
    ASSERT_EQ(recs.size(), 3u);
    EXPECT_EQ(recs[0].offset, 0);
    EXPECT_EQ(recs[1].offset, INT64_MAX);
    EXPECT_EQ(recs[2].offset, 0);
}
