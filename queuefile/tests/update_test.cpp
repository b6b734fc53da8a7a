// In-place updates: the bytes written, the refusals, and reading back.
#include "cqmgr/queuefile/envelope.hpp"
#include "cqmgr/queuefile/update.hpp"
#include "qf_builder.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::queuefile;
using namespace std::string_literals;
using qftest::num15;
using qftest::QfBuilder;
using qftest::read_all;
using qftest::temp_fd;

namespace {
QfBuilder sample() {
    QfBuilder b;
    b.envelope += encode_record('A', "trace_flags=1024") + encode_record('W', num15(1700003600)) +
                  encode_record('R', "a@x") + encode_record('R', "b@x");
    b.rcpts = 2;
    return b;
}
} // namespace

TEST(Update, MarksDoneRewritesWarnKillsTrace) {
    int fd = temp_fd(sample().build());
    Envelope env;
    ASSERT_TRUE(read_envelope(fd, env, 10).ok);
    ASSERT_EQ(env.recipients.size(), 2u);
    std::string before = read_all(fd);

    EXPECT_FALSE(mark_recipient_done(fd, env.recipients[0].offset()));
    EXPECT_FALSE(rewrite_warn_time(fd, env.warn_offset));
    EXPECT_FALSE(kill_record(fd, env.tflags_offset));
    std::string after = read_all(fd);
    ASSERT_EQ(after.size(), before.size());
    // Exactly the expected bytes changed.
    std::string want = before;
    want[env.recipients[0].offset()] = 'D';
    want.replace(env.warn_offset, 17, "W\x0f             -1"s);
    want[env.tflags_offset] = 'K';
    EXPECT_EQ(after, want);

    Envelope again;
    auto r = read_envelope(fd, again, 10);
    ASSERT_TRUE(r.ok) << r.error;
    ASSERT_EQ(again.recipients.size(), 1u);
    EXPECT_EQ(again.recipients[0].address(), "b@x");
    EXPECT_EQ(again.warn_time, -1);
    EXPECT_EQ(again.tflags, 0);
    EXPECT_TRUE(r.warnings.empty());

    // Repeating an update is harmless.
    EXPECT_FALSE(mark_recipient_done(fd, env.recipients[0].offset()));
    EXPECT_FALSE(kill_record(fd, env.tflags_offset));
    EXPECT_EQ(read_all(fd), want);
    ::close(fd);
}

TEST(Update, RefusesTheWrongRecord) {
    int fd = temp_fd(sample().build());
    Envelope env;
    ASSERT_TRUE(read_envelope(fd, env, 10).ok);
    std::string before = read_all(fd);
    auto e = mark_recipient_done(fd, env.warn_offset, "active/X");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->kind, ErrorKind::wrong_record);
    EXPECT_EQ(e->message(), "queue file active/X: byte offset " + std::to_string(env.warn_offset) +
                                ": expected a recipient record 'R'; found record type 'W'");
    EXPECT_EQ(rewrite_warn_time(fd, env.recipients[0].offset())->kind, ErrorKind::wrong_record);
    EXPECT_EQ(kill_record(fd, env.recipients[1].offset())->kind, ErrorKind::wrong_record);
    EXPECT_EQ(kill_record(fd, 0)->kind, ErrorKind::bad_argument);
    EXPECT_EQ(mark_recipient_done(fd, 1 << 30)->kind, ErrorKind::wrong_record); // past the end
    EXPECT_EQ(rewrite_warn_time(fd, env.warn_offset, 1234567890123456789)->kind,
              ErrorKind::bad_argument);
    EXPECT_EQ(read_all(fd), before);
    ::close(fd);
}

TEST(Update, RefusesAWarnRecordOfAnotherSize) {
    QfBuilder b;
    b.envelope += encode_record('W', "1700003600");
    int fd = temp_fd(b.build());
    Envelope env;
    ASSERT_TRUE(read_envelope(fd, env, 10).ok);
    auto e = rewrite_warn_time(fd, env.warn_offset);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->kind, ErrorKind::wrong_record);
    EXPECT_NE(e->found.find("payload length byte 10"), std::string::npos);
    ::close(fd);
}

TEST(Update, PathFormsOpenAndClose) {
    char name[] = "/tmp/cqmgr-upd-XXXXXX";
    int fd = ::mkstemp(name);
    std::string bytes = sample().build();
    ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    Envelope env;
    ASSERT_TRUE(read_envelope(fd, env, 10).ok);
    EXPECT_FALSE(mark_recipient_done(std::string(name), env.recipients[1].offset()));
    EXPECT_FALSE(rewrite_warn_time(std::string(name), env.warn_offset, 1800000000));
    EXPECT_FALSE(kill_record(std::string(name), env.tflags_offset));
    Envelope again;
    ASSERT_TRUE(read_envelope(fd, again, 10).ok);
    EXPECT_EQ(again.recipients.size(), 1u);
    EXPECT_EQ(again.warn_time, 1800000000);
    ::close(fd);
    ::unlink(name);
    auto e = kill_record(std::string(name), 10);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->kind, ErrorKind::io);
    EXPECT_NE(e->message().find(name), std::string::npos);
}
