// Log text made safe as stock's msg_* functions make it: the pure rule,
// and a line through the postlogd channel, which must stay one datagram
// holding one line whatever the text.
#include "cqmgr/test/temp_dir.hpp"
#include "log.hpp"
#include "log_text.hpp"

#include <cstdio>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace cqmgr;

namespace {
std::string printable(std::string text, bool utf8, size_t from = 0) {
    log::make_printable(text, from, utf8);
    return text;
}
} // namespace

TEST(LogText, ControlCharactersBecomeQuestionMarks) {
    EXPECT_EQ(printable("a\nb\r\tc\x7f\x01 d~", false), "a?b??c?? d~");
    EXPECT_EQ(printable(std::string("a\0b", 3), false), "a?b");
    // Printable ASCII stays as it is.
    std::string ascii;
    for (int c = 0x20; c < 0x7f; ++c)
        ascii += static_cast<char>(c);
    EXPECT_EQ(printable(ascii, false), ascii);
    EXPECT_EQ(printable(ascii, true), ascii);
}

TEST(LogText, EightBitBytesWithoutUtf8) {
    EXPECT_EQ(printable("caf\xc3\xa9", false), "caf??");
}

TEST(LogText, Utf8AsStockKeepsIt) {
    EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac", true), "caf\xc3\xa9 \xe2\x82\xac");
    // A lead byte takes every continuation byte after it, however many.
    EXPECT_EQ(printable("\xc3\xa9\xa9\xa9x", true), "\xc3\xa9\xa9\xa9x");
    // 192, 193 and 255 lead nothing; a lone continuation byte or a lead
    // byte with none after it (also at the end) is replaced.
    EXPECT_EQ(printable("\xc0\x80\xc1\xbf\xff\x80", true), "??????");
    EXPECT_EQ(printable("\x80x\xc3", true), "?x?");
    EXPECT_EQ(printable("\xc3\n\xa9", true), "???");
}

TEST(LogText, OnlyFromTheBody) {
    EXPECT_EQ(printable("\n\nx\n", false, 2), "\n\nx?");
}

// A header line with a newline, logged through the postlogd channel: one
// datagram, one line, the newline and tab made '?' as stock would.
TEST(LogText, OneLineThroughPostlog) {
    test::TempDir dir("log-text");
    const std::string path = dir.file("postlog");
    int sock = ::socket(AF_UNIX, SOCK_DGRAM, 0);
    ASSERT_GE(sock, 0);
    sockaddr_un sun{};
    sun.sun_family = AF_UNIX;
    path.copy(sun.sun_path, sizeof sun.sun_path - 1);
    ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&sun), sizeof sun), 0);
    // In a child, so that this process's log channel stays as it was.
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        log::Options o;
        o.postlog_path = path;
        o.hostname = "host";
        log::init(o);
        log::warn("cqmgr_priority_header_maps: X-Lane: a\n\tMar 1 00:00:00 host postfix/qmgr[1]: "
                  "ABC: removed: unknown class \"x\"");
        ::_exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    char buf[4096];
    ssize_t n = ::recv(sock, buf, sizeof buf, MSG_DONTWAIT);
    ::close(sock);
    ASSERT_GT(n, 0);
    std::string line(buf, static_cast<size_t>(n));
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_NE(line.find("]: warning: cqmgr_priority_header_maps: X-Lane: a??Mar 1 00:00:00 host "
                        "postfix/qmgr[1]: ABC: removed: unknown class \"x\""),
              std::string::npos)
        << line;
}

// fatal() runs the exit hook (where the daemon ends its other threads)
// before exit(), once.
TEST(LogExitHook, RunsBeforeAFatalExit) {
    EXPECT_EXIT(
        {
            log::set_exit_hook([] {
                std::fputs("hook ran\n", stderr);
                log::fatal("again"); // from within the hook: no second run
            });
            log::fatal("first");
        },
        ::testing::ExitedWithCode(1), "fatal: first(.|\n)*hook ran(.|\n)*fatal: again");
}
