// read_envelope() against stock qmgr's rules, one rule per test, on files
// built record by record.
#include "cqmgr/queuefile/envelope.hpp"
#include "qf_builder.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::queuefile;
using namespace std::string_literals;
using qftest::num15;
using qftest::QfBuilder;
using qftest::temp_fd;

namespace {
// Reads all batches of `bytes` with batch size `limit`; collects recipients.
struct Read {
    ReadResult result;
    Envelope env;
    std::vector<Recipient> rcpts;
    std::vector<std::string> warnings; // of every batch
};
Read read_all(const std::string& bytes, int limit = 100) {
    Read out;
    int fd = temp_fd(bytes);
    out.result = read_envelope(fd, out.env, limit, "active/TEST");
    for (;;) {
        out.warnings.insert(out.warnings.end(), out.result.warnings.begin(),
                            out.result.warnings.end());
        if (!out.result.ok) break;
        for (auto& r : out.env.recipients)
            out.rcpts.push_back(r);
        if (!out.env.rcpt_offset) break;
        out.result = read_envelope(fd, out.env, limit, "active/TEST");
    }
    ::close(fd);
    return out;
}
bool has_warning(const Read& r, std::string_view prefix) {
    for (auto& w : r.warnings)
        if (w.rfind(prefix, 0) == 0) return true;
    return false;
}
} // namespace

TEST(EnvelopeRules, PayloadsEndAtTheFirstNul) {
    QfBuilder b;
    b.envelope += encode_record('R', "a@x\0junk"s);
    b.rcpts = 1;
    auto r = read_all(b.build());
    ASSERT_TRUE(r.result.ok) << r.result.error;
    ASSERT_EQ(r.rcpts.size(), 1u);
    EXPECT_EQ(r.rcpts[0].address(), "a@x");
}

TEST(EnvelopeRules, AttributeSplitLikeSplitNameval) {
    QfBuilder b;
    b.envelope += encode_record('A', " \tlog_ident =  abc \r");
    b.envelope += encode_record('R', "a@x");
    b.rcpts = 1;
    auto r = read_all(b.build());
    ASSERT_TRUE(r.result.ok) << r.result.error;
    EXPECT_EQ(r.env.log_ident(), "abc");

    for (auto bad : {"log ident=x", "=x", "noequals", "   "}) {
        QfBuilder c;
        c.envelope += encode_record('A', bad);
        auto x = read_all(c.build());
        EXPECT_FALSE(x.result.ok) << bad;
        ASSERT_TRUE(x.result.failure) << bad;
        EXPECT_EQ(x.result.failure->kind, ErrorKind::bad_attribute);
        EXPECT_EQ(x.result.failure->offset, QfBuilder::envelope_start + 19);
        EXPECT_EQ(x.result.error.rfind("bad attribute record: ", 0), 0u) << x.result.error;
    }
}

TEST(EnvelopeRules, DsnAttributesAttachToTheNextRecipient) {
    QfBuilder b;
    b.envelope += encode_record('A', "envelope_id=ENV1") + encode_record('A', "ret_flags=2") +
                  encode_record('A', "notify_flags=14") +
                  encode_record('A', "dsn_orig_rcpt=rfc822;o@x") + encode_record('O', "o@x") +
                  encode_record('R', "r@x") + encode_record('n', "1") + encode_record('o', "x;y") +
                  encode_record('R', "s@x") + encode_record('R', "t@x");
    b.rcpts = 3;
    auto r = read_all(b.build(), 2);
    ASSERT_TRUE(r.result.ok) << r.result.error;
    EXPECT_EQ(r.env.dsn_envid(), "ENV1");
    EXPECT_EQ(r.env.dsn_ret, 2);
    ASSERT_EQ(r.rcpts.size(), 3u);
    EXPECT_EQ(r.rcpts[0].notify_flags(), 14);
    EXPECT_EQ(r.rcpts[0].dsn_orcpt(), "rfc822;o@x");
    EXPECT_EQ(r.rcpts[0].orig_rcpt(), "o@x");
    EXPECT_EQ(r.rcpts[1].notify_flags(), 1);
    EXPECT_EQ(r.rcpts[1].dsn_orcpt(), "x;y");
    EXPECT_EQ(r.rcpts[1].orig_rcpt(), "");
    EXPECT_EQ(r.rcpts[2].notify_flags(), 0);
    EXPECT_TRUE(r.warnings.empty());
}

TEST(EnvelopeRules, MalformedDsnValuesAreWarnings) {
    QfBuilder b;
    b.envelope += encode_record('A', "ret_flags=3") + encode_record('A', "notify_flags=16") +
                  encode_record('O', "first") + encode_record('O', "second") +
                  encode_record('R', "r@x") + encode_record('O', "dangling");
    b.rcpts = 1;
    auto r = read_all(b.build());
    ASSERT_TRUE(r.result.ok) << r.result.error;
    EXPECT_EQ(r.env.dsn_ret, 0);
    EXPECT_TRUE(has_warning(r, "ignoring malformed DSN RET flags in queue file record:3"));
    EXPECT_TRUE(has_warning(r, "ignoring malformed DSN notify flags <16>"));
    EXPECT_TRUE(has_warning(r, "ignoring out-of-order original recipient <first>"));
    EXPECT_TRUE(has_warning(r, "ignoring out-of-order original recipient <dangling>"));
    EXPECT_EQ(r.rcpts[0].orig_rcpt(), "second");
}

TEST(EnvelopeRules, DoneAndCanceledDropPendingRecords) {
    QfBuilder b;
    b.envelope += encode_record('O', "o1") + encode_record('D', "d@x") + encode_record('O', "o2") +
                  encode_record('/', "c@x") + encode_record('R', "r@x");
    b.rcpts = 3;
    auto r = read_all(b.build());
    ASSERT_TRUE(r.result.ok) << r.result.error;
    ASSERT_EQ(r.rcpts.size(), 1u);
    EXPECT_EQ(r.rcpts[0].orig_rcpt(), "");
    EXPECT_TRUE(r.warnings.empty());
}

TEST(EnvelopeRules, RecipientCountMismatchIsOnlyAWarning) {
    QfBuilder b;
    b.envelope += encode_record('R', "r@x");
    b.rcpts = 5;
    auto r = read_all(b.build());
    ASSERT_TRUE(r.result.ok);
    EXPECT_TRUE(has_warning(r, "rcpt count mismatch (4)"));
}

TEST(EnvelopeRules, FirstOrLastWins) {
    QfBuilder b;
    b.envelope =
        encode_record('T', "1700000000 5") + encode_record('T', "1800000000 6") +
        encode_record('c', "1600000000") + encode_record('A', "create_time=1") +
        encode_record('S', "first@x") + encode_record('S', "second@x") +
        encode_record('A', "rewrite_context=") + encode_record('A', "rewrite_context=remote") +
        encode_record('A', "client_name=legacy") + encode_record('A', "log_client_name=modern") +
        encode_record('A', "log_client_name=modern2") +
        encode_record('A', "client_address=ignored") + encode_record('A', "encoding=7bit") +
        encode_record('L', "f1:x") + encode_record('L', "f2:y") + encode_record('I', "i1") +
        encode_record('>', "r1@x") + encode_record('W', num15(1700001000)) +
        encode_record('W', num15(5)) + encode_record('A', "trace_flags=0") +
        encode_record('A', "trace_flags=1024") + encode_record('A', "trace_flags=256") +
        encode_record('R', "r@x");
    b.extracted = encode_record('A', "encoding=8bit") + encode_record('>', "r2@x");
    b.rcpts = 1;
    auto r = read_all(b.build());
    ASSERT_TRUE(r.result.ok) << r.result.error;
    EXPECT_EQ(r.env.arrival_sec, 1700000000);
    EXPECT_EQ(r.env.arrival_usec, 5);
    EXPECT_EQ(r.env.create_time, 1600000000);
    EXPECT_EQ(*r.env.sender(), "first@x");
    EXPECT_EQ(r.env.rewrite_context(), ""); // an empty value counts as set
    EXPECT_TRUE(has_warning(r, "ignoring multiple rewrite_context attribute: remote"));
    EXPECT_EQ(r.env.client_name(), "modern2");
    EXPECT_EQ(r.env.client_addr(), ""); // legacy names are ignored once a log_ name was seen
    EXPECT_EQ(r.env.encoding(), "8bit");
    EXPECT_EQ(*r.env.filter(), "f2:y");
    EXPECT_EQ(*r.env.inspect(), "i1");
    EXPECT_EQ(*r.env.redirect(), "r2@x");
    EXPECT_EQ(r.env.warn_time, 1700001000);
    EXPECT_EQ(r.env.tflags, 1024);
    EXPECT_GT(r.env.tflags_offset, 0);
}

TEST(EnvelopeRules, TimeRecordScan) {
    QfBuilder b;
    b.envelope = encode_record('T', " 1700000000 77") + encode_record('S', "s");
    auto r = read_all(b.build());
    ASSERT_TRUE(r.result.ok);
    // Seconds skip the blank; the microseconds scan restarts at the blank.
    EXPECT_EQ(r.env.arrival_sec, 1700000000);
    EXPECT_EQ(r.env.arrival_usec, 1700000000);
    EXPECT_EQ(r.env.create_time, 1700000000);
    EXPECT_EQ(r.env.rewrite_context(), "local");
}

TEST(EnvelopeRules, VerpRules) {
    QfBuilder b;
    b.envelope =
        encode_record('T', "1700000000 5") + encode_record('S', "") + encode_record('V', "+=");
    auto r = read_all(b.build());
    ASSERT_TRUE(r.result.ok);
    EXPECT_FALSE(r.env.verp_delims());
    EXPECT_TRUE(has_warning(r, "ignoring VERP request for null sender"));

    QfBuilder c;
    c.envelope += encode_record('V', "+x") + encode_record('V', "-=");
    auto s = read_all(c.build());
    EXPECT_TRUE(has_warning(s, "ignoring bad VERP request: \"+x\""));
    EXPECT_EQ(s.env.verp_delims().value_or(""), "-=");
}

TEST(EnvelopeRules, ExtractedSegmentRecipientsAndPureRecipientFastPath) {
    QfBuilder b;
    b.flags = 0; // recipients are not mixed with other records
    for (int i = 0; i < 5; ++i)
        b.envelope += encode_record('R', "e" + std::to_string(i));
    b.extracted =
        encode_record('L', "filter:x") + encode_record('R', "x0") + encode_record('R', "x1");
    b.rcpts = 7;
    int fd = temp_fd(b.build());
    Envelope env;
    auto r = read_envelope(fd, env, 2);
    ASSERT_TRUE(r.ok) << r.error;
    // The first batch already knows the extracted segment's filter.
    EXPECT_EQ(env.recipients.size(), 2u);
    EXPECT_EQ(env.filter().value_or(""), "filter:x");
    EXPECT_TRUE(env.seen_all_non_rcpt);
    std::vector<std::string> all;
    for (auto& x : env.recipients)
        all.push_back(std::string(x.address()));
    EXPECT_TRUE(r.warnings.empty());
    while (env.rcpt_offset) {
        r = read_envelope(fd, env, 2);
        ASSERT_TRUE(r.ok) << r.error;
        EXPECT_TRUE(r.warnings.empty());
        for (auto& x : env.recipients)
            all.push_back(std::string(x.address()));
    }
    EXPECT_EQ(all, (std::vector<std::string>{"e0", "e1", "e2", "e3", "e4", "x0", "x1"}));
    EXPECT_TRUE(r.warnings.empty());
    ::close(fd);
}

TEST(EnvelopeRules, ContentMustEndAtTheExtractedMarker) {
    QfBuilder b;
    std::string f = b.build();
    f[b.xtra_offset()] = 'N';
    auto r = read_all(f);
    ASSERT_FALSE(r.result.ok);
    EXPECT_EQ(r.result.failure->kind, ErrorKind::unexpected_record);
    EXPECT_EQ(r.result.failure->offset, b.xtra_offset());
    EXPECT_EQ(r.result.error,
              "Unexpected record type 'N' at offset " + std::to_string(b.xtra_offset()));
    EXPECT_EQ(r.result.error_prefix, ErrorPrefix::none);
    EXPECT_NE(r.result.failure->message().find("active/TEST"), std::string::npos);
}

TEST(EnvelopeRules, ContentTypesAreNotAllowedInTheEnvelope) {
    for (char t : {'N', 'w', 'm', 'f', 'd', 'Z', '\x80'}) {
        QfBuilder b;
        b.envelope += encode_record(t, "x");
        auto r = read_all(b.build());
        ASSERT_FALSE(r.result.ok) << t;
        EXPECT_EQ(r.result.failure->kind, ErrorKind::unexpected_record);
    }
}

TEST(EnvelopeRules, NulTypeByteMeansMissingEnd) {
    QfBuilder b;
    b.envelope += std::string("\0\0", 2);
    auto r = read_all(b.build());
    ASSERT_FALSE(r.result.ok);
    EXPECT_EQ(r.result.error, "message rejected: missing end record");
    EXPECT_EQ(r.result.error_prefix, ErrorPrefix::queue_id);
    EXPECT_EQ(r.result.failure->kind, ErrorKind::missing_end);
}

TEST(EnvelopeRules, MissingRequiredRecords) {
    QfBuilder noT;
    noT.envelope = encode_record('S', "s");
    EXPECT_EQ(read_all(noT.build()).result.failure->kind, ErrorKind::missing_time);
    QfBuilder noS;
    noS.envelope = encode_record('T', "1 2");
    auto r = read_all(noS.build());
    EXPECT_EQ(r.result.failure->kind, ErrorKind::missing_sender);
    EXPECT_EQ(r.result.error, "message rejected: missing sender record");
    std::string noC = encode_record('T', "1 2") + encode_record('S', "s") + encode_record('E', "");
    EXPECT_EQ(read_all(noC).result.failure->kind, ErrorKind::missing_size);
}

TEST(EnvelopeRules, SizeRecordChecks) {
    auto with_size = [](const std::string& payload) {
        QfBuilder b;
        std::string f = b.build();
        return encode_record('C', payload) + f.substr(97);
    };
    auto weird = read_all(with_size("12 34"));
    EXPECT_EQ(weird.result.failure->kind, ErrorKind::weird_size);
    EXPECT_EQ(weird.result.error, "message rejected: weird size record");
    EXPECT_EQ(read_all(with_size("")).result.failure->kind, ErrorKind::weird_size);
    EXPECT_EQ(read_all(with_size("0 100 1")).result.failure->kind, ErrorKind::bad_size);
    EXPECT_EQ(read_all(with_size("10 100 1 32")).result.failure->kind, ErrorKind::bad_size_flags);
    EXPECT_EQ(read_all(with_size("10 100 1 0 -1")).result.failure->kind, ErrorKind::bad_size);
    auto huge = read_all(with_size("9223372036854775807 100 1 0"));
    ASSERT_FALSE(huge.result.ok);
}

TEST(EnvelopeRules, ThreeFieldSizeRecordKeepsDefaults) {
    QfBuilder b;
    b.envelope += encode_record('R', "r");
    std::string f = b.build();
    std::string three =
        std::to_string(b.content.size()) + " " + std::to_string(b.data_offset() - 97 + 97) + " 1";
    // Same length as the original so that offsets stay right.
    three.resize(95, ' ');
    auto r = read_all(encode_record('C', three) + f.substr(97));
    ASSERT_TRUE(r.result.ok) << r.result.error;
    EXPECT_EQ(r.env.size_fields, 3);
    EXPECT_EQ(r.env.rflags, read_flag::mixed_rcpt_other);
    EXPECT_EQ(r.env.cont_length, static_cast<int64_t>(b.content.size()));
}

TEST(EnvelopeRules, OneFieldSizeRecordScansForTheContent) {
    // A pre-1.0 file: 'M' carries the offset of the extracted segment.
    std::string head = encode_record('C', "              5") + encode_record('T', "1700000000") +
                       encode_record('S', "old@x") + encode_record('R', "a") +
                       encode_record('D', "b");
    std::string content = encode_record('N', "hello");
    long m_at = static_cast<long>(head.size());
    // The M payload is 15 wide so that its own length is known in advance.
    long x_at = m_at + 2 + 15 + static_cast<long>(content.size());
    std::string file = head + encode_record('M', num15(x_at)) + content + encode_record('X', "") +
                       encode_record('R', "c") + encode_record('E', "");
    auto r = read_all(file);
    ASSERT_TRUE(r.result.ok) << r.result.error;
    EXPECT_EQ(r.env.size_fields, 1);
    EXPECT_EQ(r.env.data_offset, m_at + 17);
    EXPECT_EQ(r.env.data_size, static_cast<int64_t>(content.size()));
    ASSERT_EQ(r.rcpts.size(), 2u);
    EXPECT_EQ(r.rcpts[1].address(), "c");
    EXPECT_TRUE(r.warnings.empty());

    // A modern file with a one-field SIZE record cannot be scanned.
    std::string bad = encode_record('C', "              5") + encode_record('T', "1") +
                      encode_record('S', "s") + encode_record('M', "") + content +
                      encode_record('X', "") + encode_record('E', "");
    auto b = read_all(bad);
    ASSERT_FALSE(b.result.ok);
    EXPECT_EQ(b.result.failure->kind, ErrorKind::old_style_scan);
}

TEST(EnvelopeRules, PointerRules) {
    // An empty pointer payload is a placeholder.
    QfBuilder b;
    b.envelope += encode_record('p', "") + encode_record('R', "r");
    b.rcpts = 1;
    auto r = read_all(b.build());
    ASSERT_TRUE(r.result.ok) << r.result.error;
    EXPECT_EQ(r.rcpts.size(), 1u);

    QfBuilder m;
    m.envelope += encode_record('p', "  12x");
    auto bad = read_all(m.build());
    ASSERT_FALSE(bad.result.ok);
    EXPECT_EQ(bad.result.failure->kind, ErrorKind::bad_pointer);
    EXPECT_EQ(bad.result.error, "malformed pointer record value: 12x");
    EXPECT_EQ(bad.result.error_prefix, ErrorPrefix::file_path);

    // A pointer to itself loops until the reverse-jump limit.
    QfBuilder l;
    long at = QfBuilder::envelope_start + static_cast<long>(l.envelope.size());
    l.envelope += encode_record('p', num15(at));
    auto loop = read_all(l.build());
    ASSERT_FALSE(loop.result.ok);
    EXPECT_EQ(loop.result.failure->kind, ErrorKind::pointer_loop);
    EXPECT_EQ(loop.result.error, "too many reverse jump records");
    EXPECT_EQ(loop.result.error_prefix, ErrorPrefix::file_path);
}

TEST(EnvelopeRules, RecipientsBehindPointersHaveHeapOffsets) {
    // C T S p(->heap) R(after) M ... X E heap:[O R p(->back)]
    QfBuilder b;
    long p_at = QfBuilder::envelope_start + static_cast<long>(b.envelope.size());
    b.envelope += encode_record('p', num15(0)) + encode_record('R', "after");
    b.rcpts = 2;
    long heap = static_cast<long>(b.build().size());
    b.envelope.replace(p_at - QfBuilder::envelope_start, 17, encode_record('p', num15(heap)));
    b.heap = encode_record('O', "h@x") + encode_record('R', "h@x") +
             encode_record('p', num15(p_at + 17));
    auto r = read_all(b.build());
    ASSERT_TRUE(r.result.ok) << r.result.error;
    ASSERT_EQ(r.rcpts.size(), 2u);
    EXPECT_EQ(r.rcpts[0].address(), "h@x");
    EXPECT_EQ(r.rcpts[0].orig_rcpt(), "h@x");
    EXPECT_EQ(r.rcpts[0].offset(), heap + 5);
    EXPECT_EQ(r.rcpts[1].address(), "after");
    EXPECT_EQ(r.rcpts[1].offset(), p_at + 17);
}

TEST(EnvelopeRules, DamagedRecordsGiveStockWarnings) {
    QfBuilder b;
    std::string f = b.build();
    f.resize(f.size() - 1); // cut the E record's length byte
    auto r = read_all(f);
    ASSERT_FALSE(r.result.ok);
    EXPECT_EQ(r.result.error, "message rejected: missing end record");
    EXPECT_EQ(r.result.record_warning, "unexpected EOF reading length, record type 69");
    EXPECT_EQ(r.result.failure->kind, ErrorKind::truncated_header);
    EXPECT_EQ(r.result.failure->offset, static_cast<int64_t>(f.size() - 1));
}

TEST(EnvelopeRules, APointerCycleThroughRecipientsEndsAcrossBatches) {
    // p(->loop) where loop: R p(->loop): every batch would find recipients
    // forever if the loop counter started afresh with each batch.
    QfBuilder b;
    long p_at = QfBuilder::envelope_start + static_cast<long>(b.envelope.size());
    b.envelope += encode_record('p', num15(p_at + 17));
    long loop = p_at + 17;
    b.envelope += encode_record('R', "r") + encode_record('p', num15(loop));
    int fd = temp_fd(b.build());
    Envelope env;
    auto r = read_envelope(fd, env, 2);
    int batches = 1;
    while (r.ok && env.rcpt_offset && batches < 100000) {
        r = read_envelope(fd, env, 2);
        ++batches;
    }
    EXPECT_FALSE(r.ok);
    EXPECT_LT(batches, 100000);
    EXPECT_EQ(r.failure->kind, ErrorKind::pointer_loop);
    ::close(fd);
}

TEST(EnvelopeRules, TruncatedPayloadWarningNamesTheLength) {
    QfBuilder b;
    std::string f = b.build();
    f = f.substr(0, 97 + 14 + 2); // T record complete, S record cut after its header
    auto r = read_all(f);
    ASSERT_FALSE(r.result.ok);
    EXPECT_EQ(r.result.record_warning, "unexpected EOF in data, record type 83 length 3");
    EXPECT_EQ(r.result.failure->kind, ErrorKind::truncated_payload);
    EXPECT_EQ(r.result.failure->offset, 97 + 14);
}
