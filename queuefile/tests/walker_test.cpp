// RecordWalker: postcat's order of records, pointers and segments.
#include "cqmgr/queuefile/record_walker.hpp"
#include "qf_builder.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::queuefile;
using qftest::num15;
using qftest::QfBuilder;
using qftest::temp_fd;

namespace {
std::string types(int fd, WalkOptions o, std::optional<FileError>* failure = nullptr) {
    RecordWalker w(fd, "t", o);
    WalkedRecord r;
    std::string out;
    while (w.next(r)) out.push_back(static_cast<char>(r.type));
    if (failure) *failure = w.failure();
    return out;
}
} // namespace

TEST(Walker, SegmentsAndContentSkip) {
    QfBuilder b;
    b.extracted = encode_record('R', "x");
    int fd = temp_fd(b.build());
    EXPECT_EQ(types(fd, {true, true}), "CTSMXRE");
    EXPECT_EQ(types(fd, {true, false}), "CTSMNNNXRE");
    RecordWalker w(fd, "t");
    WalkedRecord r;
    std::vector<Segment> segs;
    while (w.next(r)) segs.push_back(r.segment);
    EXPECT_EQ(segs.back(), Segment::extracted);
    EXPECT_EQ(segs[3], Segment::envelope); // 'M' still belongs to the envelope
    EXPECT_EQ(w.data_offset(), b.data_offset());
    EXPECT_FALSE(w.failure());
    ::close(fd);
}

TEST(Walker, FollowsOrShowsPointers) {
    QfBuilder b;
    long p_at = QfBuilder::envelope_start + static_cast<long>(b.envelope.size());
    b.envelope += encode_record('p', num15(0)) + encode_record('R', "r");
    long heap = static_cast<long>(b.build().size());
    b.envelope.replace(p_at - QfBuilder::envelope_start, 17, encode_record('p', num15(heap)));
    b.heap = encode_record('O', "o") + encode_record('p', num15(p_at + 17));
    int fd = temp_fd(b.build());
    EXPECT_EQ(types(fd, {true, true}), "CTSpOpRMXE");
    // Raw: linear to the end of the file, past E.
    EXPECT_EQ(types(fd, {false, true}), "CTSpRMXEOp");
    ::close(fd);
}

TEST(Walker, MarksRecordsOutOfTheirSegment) {
    QfBuilder b;
    b.envelope += encode_record('N', "stray");
    int fd = temp_fd(b.build());
    RecordWalker w(fd, "t");
    WalkedRecord r;
    bool seen = false;
    while (w.next(r))
        if (r.type == 'N') seen = !r.allowed;
    EXPECT_TRUE(seen);
    ::close(fd);
}

TEST(Walker, ReportsDamage) {
    QfBuilder b;
    std::string f = b.build();
    f.resize(f.size() - 2);
    int fd = temp_fd(f);
    std::optional<FileError> failure;
    types(fd, {true, true}, &failure);
    ASSERT_TRUE(failure);
    EXPECT_EQ(failure->kind, ErrorKind::missing_end);
    ::close(fd);

    int fd2 = temp_fd("Zjunk");
    types(fd2, {true, true}, &failure);
    ASSERT_TRUE(failure);
    EXPECT_EQ(failure->kind, ErrorKind::unexpected_record);
    ::close(fd2);
}

TEST(Walker, RefusesASizeRecordThatPointsBack) {
    std::string f = encode_record('C', "1 0 0") + encode_record('M', "") + encode_record('E', "");
    int fd = temp_fd(f);
    std::optional<FileError> failure;
    EXPECT_EQ(types(fd, {true, true}, &failure), "CM");
    ASSERT_TRUE(failure);
    EXPECT_EQ(failure->kind, ErrorKind::bad_size);
    ::close(fd);
}
