// Reading a message's primary header lines (header_block.hpp).
#include "cqmgr/queuefile/envelope.hpp"
#include "cqmgr/queuefile/header_block.hpp"
#include "qf_builder.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::queuefile;
using qftest::encode_record;

namespace {

std::vector<std::string> headers_of(const qftest::QfBuilder& b, size_t max_bytes = 65536) {
    int fd = qftest::temp_fd(b.build());
    auto out = read_header_lines(fd, b.data_offset(), max_bytes);
    ::close(fd);
    return out;
}

TEST(HeaderBlock, LogicalLinesUpToTheBlankLine) {
    qftest::QfBuilder b;
    b.content = encode_record('N', "From: a@example.com") + encode_record('N', "Subject: a long") +
                encode_record('N', "\tfolded subject") + encode_record('L', "X-Priority: ") +
                encode_record('N', "1 (Highest)") + encode_record('N', "") +
                encode_record('N', "X-Not-A-Header: body");
    EXPECT_EQ(headers_of(b),
              (std::vector<std::string>{"From: a@example.com", "Subject: a long\n\tfolded subject",
                                        "X-Priority: 1 (Highest)"}));
}

TEST(HeaderBlock, ReadOnceOnFirstUse) {
    // The priority tables and the sender class tables share one read.
    qftest::QfBuilder b;
    b.content = encode_record('N', "List-Id: <news.example.com>") + encode_record('N', "");
    int fd = qftest::temp_fd(b.build());
    HeaderLinesOnce h(fd, b.data_offset(), 65536);
    EXPECT_FALSE(h.read());
    EXPECT_EQ(h.lines(), (std::vector<std::string>{"List-Id: <news.example.com>"}));
    EXPECT_TRUE(h.read());
    // A second use does not read the file again (it is closed now).
    ::close(fd);
    EXPECT_EQ(h.lines(), (std::vector<std::string>{"List-Id: <news.example.com>"}));
}

TEST(HeaderBlock, BodyWithoutABlankLineEndsTheBlock) {
    qftest::QfBuilder b;
    b.content = encode_record('N', "Subject: x") + encode_record('N', "just text") +
                encode_record('N', "X-Late: no");
    EXPECT_EQ(headers_of(b), (std::vector<std::string>{"Subject: x"}));
}

TEST(HeaderBlock, TheReadIsBounded) {
    qftest::QfBuilder b;
    b.content.clear();
    for (int i = 0; i < 100; ++i)
        b.content +=
            encode_record('N', "X-Filler-" + std::to_string(i) + ": " + std::string(90, 'x'));
    b.content += encode_record('N', "X-Priority: 1");
    auto out = headers_of(b, 1000);
    EXPECT_LT(out.size(), 12u);
    EXPECT_TRUE(out.empty() || out.back().starts_with("X-Filler-"));
}

TEST(HeaderBlock, APointerIsFollowed) {
    // A milter's edit: a header line added on the heap (after 'E'), reached
    // through a pointer in the content that the heap points back from.
    qftest::QfBuilder b;
    const size_t ptr_size = encode_record('p', qftest::num15(0)).size();
    b.content = encode_record('N', "Subject: x");
    long ptr_at = b.data_offset() + static_cast<long>(b.content.size());
    long after_ptr = ptr_at + static_cast<long>(ptr_size);
    b.content +=
        encode_record('p', qftest::num15(0)) + encode_record('N', "") + encode_record('N', "body");
    b.heap = encode_record('N', "X-Added: yes") + encode_record('p', qftest::num15(after_ptr));
    std::string bytes = b.build();
    bytes.replace(static_cast<size_t>(ptr_at), ptr_size,
                  encode_record('p', qftest::num15(b.heap_start())));
    int fd = qftest::temp_fd(bytes);
    auto out = read_header_lines(fd, b.data_offset(), 65536);
    ::close(fd);
    EXPECT_EQ(out, (std::vector<std::string>{"Subject: x", "X-Added: yes"}));
}

} // namespace
