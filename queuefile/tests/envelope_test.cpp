// Envelope reading, checked on queue files that stock Postfix 3.7.11 wrote
// (fixtures/*.qf, kept from recorded runs of stock qmgr) and on files built
// record by record.
#include "cqmgr/queuefile/envelope.hpp"

#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <unistd.h>

using namespace cqmgr::queuefile;
using namespace std::string_literals;

#ifndef FIXTURE_DIR
#error FIXTURE_DIR must be defined
#endif

namespace {
int open_fixture(const char* name) {
    std::string path = std::string(FIXTURE_DIR) + "/" + name;
    int fd = ::open(path.c_str(), O_RDONLY);
    EXPECT_GE(fd, 0) << path;
    return fd;
}

int temp_fd(const std::string& bytes) {
    char name[] = "/tmp/cqmgr-qf-XXXXXX";
    int fd = ::mkstemp(name);
    ::unlink(name);
    EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    return fd;
}

// Builds a SIZE record payload the way cleanup writes it.
std::string size_payload(long data_size, long data_offset, int rcpts, int flags, long cont) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%15ld %15ld %15d %15d %15ld %15d", data_size, data_offset,
                  rcpts, flags, cont, 0);
    return buf;
}

// A synthetic queue file with `n` recipients before the content.
std::string make_file(int n, int flags = 0) {
    std::string head = encode_record('T', "1700000000 5") + encode_record('S', "s@x");
    std::string rcpts;
    for (int i = 0; i < n; ++i) {
        rcpts += encode_record('O', "r" + std::to_string(i) + "@y");
        rcpts += encode_record('R', "r" + std::to_string(i) + "@y");
    }
    std::string content =
        encode_record('N', "Subject: x") + encode_record('N', "") + encode_record('N', "body");
    long size_len = 97;
    long data_offset = size_len + static_cast<long>(head.size() + rcpts.size()) + 2; // M\0
    long data_size = static_cast<long>(content.size());
    return encode_record('C', size_payload(data_size, data_offset, n, flags, data_size)) + head +
           rcpts + encode_record('M', "") + content + encode_record('X', "") +
           encode_record('E', "");
}
} // namespace

TEST(Envelope, ReadsStockDeliverOkFile) {
    int fd = open_fixture("deliver-ok.qf");
    Envelope env;
    auto r = read_envelope(fd, env, 100);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_TRUE(r.sender_seen);
    EXPECT_EQ(env.data_size, 261);
    EXPECT_EQ(env.data_offset, 346);
    EXPECT_EQ(env.cont_length, 261);
    EXPECT_EQ(env.rflags, 0);
    EXPECT_EQ(env.arrival_sec, 1795314878);
    EXPECT_EQ(env.arrival_usec, 633690);
    EXPECT_EQ(env.create_time, 1795314878);
    EXPECT_EQ(*env.sender(), "alice@example.org");
    EXPECT_EQ(env.rewrite_context(), "local");
    EXPECT_EQ(env.encoding(), "");
    ASSERT_EQ(env.recipients.size(), 2u);
    // Offsets as stock qmgr sent them in the delivery request.
    EXPECT_EQ(env.recipients[0].offset(), 245);
    EXPECT_EQ(env.recipients[0].address(), "bob@dest.example");
    EXPECT_EQ(env.recipients[0].orig_rcpt(), "bob@dest.example");
    EXPECT_EQ(env.recipients[0].dsn_orcpt(), "rfc822;bob@dest.example");
    EXPECT_EQ(env.recipients[1].offset(), 324);
    EXPECT_EQ(env.rcpt_offset, 0);
    EXPECT_EQ(env.rcpt_unread, 0);
    EXPECT_TRUE(r.warnings.empty());
    ::close(fd);
}

TEST(Envelope, ReadsOtherStockFiles) {
    for (const char* name : {"dead-destination.qf", "local-delivery.qf", "deliver-5xx-bounce.qf"}) {
        int fd = open_fixture(name);
        Envelope env;
        auto r = read_envelope(fd, env, 100);
        ASSERT_TRUE(r.ok) << name << ": " << r.error;
        EXPECT_EQ(env.recipients.size(), 1u) << name;
        ::close(fd);
    }
}

TEST(Envelope, ReadsRecipientsInBatches) {
    int fd = temp_fd(make_file(25));
    Envelope env;
    std::vector<std::string> all;
    auto r = read_envelope(fd, env, 10);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(env.recipients.size(), 10u);
    EXPECT_NE(env.rcpt_offset, 0);
    for (auto& x : env.recipients)
        all.push_back(std::string(x.address()));
    while (env.rcpt_offset) {
        r = read_envelope(fd, env, 10);
        ASSERT_TRUE(r.ok) << r.error;
        for (auto& x : env.recipients)
            all.push_back(std::string(x.address()));
    }
    ASSERT_EQ(all.size(), 25u);
    for (int i = 0; i < 25; ++i)
        EXPECT_EQ(all[i], "r" + std::to_string(i) + "@y");
    EXPECT_EQ(env.rcpt_unread, 0);
    ::close(fd);
}

TEST(Envelope, MissingEndRecordIsCorrupt) {
    std::string f = make_file(1);
    f.resize(f.size() - 2);
    int fd = temp_fd(f);
    Envelope env;
    auto r = read_envelope(fd, env, 10);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error.rfind("message rejected: missing end record", 0), 0u) << r.error;
    ::close(fd);
}

TEST(Envelope, UnexpectedRecordTypeNamesOffset) {
    std::string f = make_file(1);
    // Put a content record where an envelope record belongs.
    std::string bad = f.substr(0, 97) + encode_record('N', "x") + f.substr(97);
    int fd = temp_fd(bad);
    Envelope env;
    auto r = read_envelope(fd, env, 10);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error, "Unexpected record type 'N' at offset 97");
    ::close(fd);
}

TEST(Envelope, BadSizeFlagsAreCorrupt) {
    std::string f = make_file(1, 0x40);
    int fd = temp_fd(f);
    Envelope env;
    auto r = read_envelope(fd, env, 10);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error.rfind("invalid flags in size record", 0), 0u) << r.error;
    ::close(fd);
}

TEST(Envelope, DoneRecipientsAreSkipped) {
    std::string f = make_file(3);
    // Mark the second R as done, as a delivery agent would.
    size_t pos = 0;
    for (int i = 0; i < 2; ++i)
        pos = f.find("R\x04r", pos + 1);
    ASSERT_NE(pos, std::string::npos);
    f[pos] = 'D';
    int fd = temp_fd(f);
    Envelope env;
    auto r = read_envelope(fd, env, 10);
    ASSERT_TRUE(r.ok) << r.error;
    ASSERT_EQ(env.recipients.size(), 2u);
    EXPECT_EQ(env.recipients[1].address(), "r2@y");
    ::close(fd);
}

TEST(Envelope, FollowsPointerRecords) {
    // S is replaced by a pointer into a heap after E, which jumps back.
    std::string t = encode_record('T', "1700000000 5");
    std::string content = encode_record('N', "x");
    auto ptr = [](long off) {
        char b[32];
        std::snprintf(b, sizeof b, "%15ld", off);
        return encode_record('p', b);
    };
    // Layout: C T p(heap) R M content X E heap:[S p(back)]
    long c_len = 97, t_len = static_cast<long>(t.size()), p_len = 17;
    long r_off = c_len + t_len + p_len;
    std::string r = encode_record('R', "u@v");
    long m_off = r_off + static_cast<long>(r.size());
    long data_offset = m_off + 2;
    long x_off = data_offset + static_cast<long>(content.size());
    long heap = x_off + 2 + 2;
    std::string file =
        encode_record('C', size_payload(static_cast<long>(content.size()), data_offset, 1, 0, 0)) +
        t + ptr(heap) + r + encode_record('M', "") + content + encode_record('X', "") +
        encode_record('E', "") + encode_record('S', "heap@sender") + ptr(r_off);
    int fd = temp_fd(file);
    Envelope env;
    auto res = read_envelope(fd, env, 10);
    ASSERT_TRUE(res.ok) << res.error;
    EXPECT_EQ(*env.sender(), "heap@sender");
    ASSERT_EQ(env.recipients.size(), 1u);
    EXPECT_EQ(env.recipients[0].offset(), r_off);
    ::close(fd);
}
