#include "cqmgr/queuefile/record.hpp"

#include <cstdio>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace cqmgr::queuefile;
using namespace std::string_literals;

namespace {
// Writes `bytes` to an unlinked temporary file and returns its descriptor.
int temp_fd(const std::string& bytes) {
    FILE* f = std::tmpfile();
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fflush(f);
    return ::dup(fileno(f)); // the FILE is leaked on purpose: tests are short
}
} // namespace

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
    EXPECT_EQ(in.get(p), 'E');
    EXPECT_EQ(in.get(p), rec::eof);
    ::close(fd);
}

TEST(Record, TruncatedPayloadIsAnError) {
    int fd = temp_fd("S\x05" "ab"s);
    RecordStream in(fd);
    std::string p;
    EXPECT_EQ(in.get(p), rec::error);
    EXPECT_NE(in.error().find("end of file in record payload at offset 0"), std::string::npos);
    ::close(fd);
}

TEST(Record, OverlongLengthIsAnError) {
    int fd = temp_fd("S\xff\xff\xff\xff\xff\x01"s);
    RecordStream in(fd);
    std::string p;
    EXPECT_EQ(in.get(p), rec::error);
    EXPECT_NE(in.error().find("length field too long"), std::string::npos);
    ::close(fd);
}

TEST(Record, HugeLengthIsRefusedWithoutAllocating) {
    int fd = temp_fd("S\xff\xff\xff\x7f"s);
    RecordStream in(fd);
    std::string p;
    EXPECT_EQ(in.get(p), rec::error);
    EXPECT_NE(in.error().find("exceeds"), std::string::npos);
    ::close(fd);
}
