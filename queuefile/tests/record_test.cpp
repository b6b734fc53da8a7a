#include "cqmgr/queuefile/c_parse.hpp"
#include "cqmgr/queuefile/record.hpp"
#include "qf_builder.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

using namespace cqmgr::queuefile;
using namespace std::string_literals;
using qftest::temp_fd;

TEST(Record, LengthEncoding) {
    EXPECT_EQ(encode_record('N', ""), "N\0"s);
    EXPECT_EQ(encode_record('N', std::string(127, 'x')).substr(0, 2), "N\x7f"s);
    EXPECT_EQ(encode_record('N', std::string(128, 'x')).substr(0, 3), "N\x80\x01"s);
    EXPECT_EQ(encode_record('N', std::string(300, 'x')).substr(0, 3), "N\xac\x02"s);
}

TEST(Record, ReadsBackWhatWasWritten) {
    std::string file = encode_record('S', "a@b") + encode_record('N', std::string(300, 'y')) +
                       encode_record('E', "");
    int fd = temp_fd(file);
    RecordStream in(fd);
    std::string p;
    EXPECT_EQ(in.get(p), 'S');
    EXPECT_EQ(p, "a@b");
    EXPECT_EQ(in.tell(), 5);
    EXPECT_EQ(in.get(p), 'N');
    EXPECT_EQ(p.size(), 300u);
    EXPECT_EQ(in.record_start(), 5);
    EXPECT_EQ(in.get(p), 'E');
    EXPECT_EQ(in.get(p), rec::eof);
    ::close(fd);
}

TEST(Record, TruncatedPayloadIsATypedError) {
    int fd = temp_fd("S\x05" "ab"s);
    RecordStream in(fd, "incoming/ABC");
    std::string p;
    EXPECT_EQ(in.get(p), rec::error);
    EXPECT_EQ(in.failure().kind, ErrorKind::truncated_payload);
    EXPECT_EQ(in.failure().offset, 0);
    EXPECT_EQ(in.record_type(), 'S');
    EXPECT_EQ(in.error(), "queue file incoming/ABC: byte offset 0: expected 5 payload bytes in "
                          "record type 'S'; found end of file after 2");
    ::close(fd);
}

TEST(Record, TruncatedHeaderIsATypedError) {
    int fd = temp_fd("N\0R\x80"s);
    RecordStream in(fd, "f");
    std::string p;
    EXPECT_EQ(in.get(p), 'N');
    EXPECT_EQ(in.get(p), rec::error);
    EXPECT_EQ(in.failure().kind, ErrorKind::truncated_header);
    EXPECT_EQ(in.failure().offset, 2);
    ::close(fd);
}

TEST(Record, OverlongLengthIsAnError) {
    int fd = temp_fd("S\xff\xff\xff\xff\xff\x01"s);
    RecordStream in(fd);
    std::string p;
    EXPECT_EQ(in.get(p), rec::error);
    EXPECT_EQ(in.failure().kind, ErrorKind::length_overflow);
    ::close(fd);
}

TEST(Record, HugeLengthIsRefusedWithoutAllocating) {
    int fd = temp_fd("S\xff\xff\xff\x7f"s);
    RecordStream in(fd);
    std::string p;
    EXPECT_EQ(in.get(p), rec::error);
    EXPECT_EQ(in.failure().kind, ErrorKind::length_limit);
    EXPECT_LT(p.capacity(), 1u << 20);
    ::close(fd);
}

TEST(Record, ReadsAcrossBufferBoundaries) {
    std::string file;
    for (int i = 0; i < 5000; ++i) file += encode_record('R', "recipient" + std::to_string(i) + "@x");
    file += encode_record('N', std::string(200000, 'z'));
    int fd = temp_fd(file);
    RecordStream in(fd);
    std::string p;
    for (int i = 0; i < 5000; ++i) {
        ASSERT_EQ(in.get(p), 'R');
        ASSERT_EQ(p, "recipient" + std::to_string(i) + "@x");
    }
    ASSERT_EQ(in.get(p), 'N');
    EXPECT_EQ(p.size(), 200000u);
    EXPECT_EQ(in.get(p), rec::eof);
    ::close(fd);
}

TEST(CParse, NumbersReadLikeTheCLibrary) {
    EXPECT_EQ(c_atol("  42xyz"), 42);
    EXPECT_EQ(c_atol("-7"), -7);
    EXPECT_EQ(c_atol("99999999999999999999999"), INT64_MAX);
    EXPECT_EQ(c_atol("-99999999999999999999999"), INT64_MIN);
    EXPECT_EQ(c_atol(""), 0);
    EXPECT_EQ(c_atoi("4294967298"), 2); // atoi truncates strtol's long
    EXPECT_EQ(parse_pointer("              0"), 0);
    EXPECT_EQ(parse_pointer("            863"), 863);
    EXPECT_EQ(parse_pointer(""), 0); // Postfix: an empty pointer is a placeholder
    EXPECT_EQ(parse_pointer(" 12 "), -1);
    EXPECT_EQ(parse_pointer("-5"), -1);
    EXPECT_EQ(parse_pointer("99999999999999999999"), -1);
    EXPECT_EQ(c_string("a\0b"s), "a");
}

TEST(ErrorText, EscapesBytes) {
    EXPECT_EQ(escape_bytes("a\"b\\c\n\x01\xff"s), "a\\\"b\\\\c\\n\\x01\\xFF");
    EXPECT_EQ(escape_bytes(std::string(10, 'x'), 4), "xxxx...");
    EXPECT_EQ(escape_bytes("\0"s "1"), "\\x001");
}
