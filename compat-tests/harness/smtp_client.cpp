#include "smtp_client.hpp"

#include "error.hpp"
#include "signals.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <cerrno>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace compat {

// Opens the connection and checks the greeting.
SmtpClient::SmtpClient(std::uint16_t port, std::chrono::seconds io_timeout)
    : port_(port), timeout_(io_timeout) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw sys_error("socket");
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(port);
    while (connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
        if (errno == EINTR) {
            check_interrupted();
            continue;
        }
        Error e = sys_error("connect 127.0.0.1:" + std::to_string(port));
        close(fd_);
        fd_ = -1;
        throw e;
    }
    SmtpReply r = read_reply();
    if (r.code != 220) {
        close(fd_);
        fd_ = -1;
        throw Error("smtp 127.0.0.1:" + std::to_string(port) +
                    ": expected a 220 greeting, found \"" + r.text + "\"");
    }
}

// Closes the socket.
SmtpClient::~SmtpClient() {
    if (fd_ >= 0) close(fd_);
}

// Sends EHLO.
void SmtpClient::ehlo(const std::string& name) {
    command("EHLO " + name, 2, "EHLO");
}

// One complete transaction; the message is converted to CRLF and dot-stuffed.
void SmtpClient::send_mail(const std::string& from, const std::vector<std::string>& to,
                           const std::string& message, const std::string& mail_params,
                           const std::string& rcpt_params) {
    std::string mp = mail_params.empty() ? "" : " " + mail_params;
    std::string rp = rcpt_params.empty() ? "" : " " + rcpt_params;
    command("MAIL FROM:<" + from + ">" + mp, 2, "MAIL FROM");
    for (size_t first = 0; first < to.size(); first += rcpt_window_) {
        size_t end = std::min(to.size(), first + rcpt_window_);
        std::string batch;
        for (size_t i = first; i < end; ++i)
            batch += "RCPT TO:<" + to[i] + ">" + rp + "\r\n";
        write_all(batch);
        for (size_t i = first; i < end; ++i)
            expect_reply(2, "RCPT TO:<" + to[i] + ">");
    }
    command("DATA", 3, "DATA");
    std::string data;
    size_t pos = 0;
    while (pos < message.size()) {
        size_t nl = message.find('\n', pos);
        std::string line =
            message.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty() && line[0] == '.') data += '.';
        data += line + "\r\n";
        if (nl == std::string::npos) break;
        pos = nl + 1;
    }
    data += ".";
    command(data, 2, "end of DATA");
}

// Ends the session politely.
void SmtpClient::quit() {
    write_all("QUIT\r\n");
    try {
        read_reply();
    } catch (const Interrupted&) {
        throw;
    } catch (const Error&) {
        // The server may close first; that is fine.
    }
}

// Sends one command line and checks the reply class (2 = 2xx, 3 = 3xx).
SmtpReply SmtpClient::command(const std::string& line, int expect_class, const std::string& what) {
    write_all(line + "\r\n");
    return expect_reply(expect_class, what);
}

// Reads the next reply and checks its class; `what` names the command in errors.
SmtpReply SmtpClient::expect_reply(int expect_class, const std::string& what) {
    SmtpReply r = read_reply();
    if (r.code / 100 != expect_class)
        throw Error("smtp 127.0.0.1:" + std::to_string(port_) + ": expected a " +
                    std::to_string(expect_class) + "xx reply to " + what + ", found \"" + r.text +
                    "\"");
    return r;
}

// Writes everything, waiting for writability with the I/O timeout.
void SmtpClient::write_all(const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
        pollfd p{fd_, POLLOUT, 0};
        int n = poll(&p, 1, static_cast<int>(timeout_.count() * 1000));
        if (n < 0) {
            if (errno == EINTR) {
                check_interrupted();
                continue;
            }
            throw sys_error("poll");
        }
        if (n == 0)
            throw Error("smtp: expected to write within " + std::to_string(timeout_.count()) +
                        " s, timed out");
        ssize_t w = send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            throw sys_error("smtp send to 127.0.0.1:" + std::to_string(port_));
        }
        done += static_cast<size_t>(w);
    }
}

// Reads one CRLF-terminated line, waiting with the I/O timeout.
std::string SmtpClient::read_line() {
    for (;;) {
        size_t nl = buf_.find('\n');
        if (nl != std::string::npos) {
            std::string line = buf_.substr(0, nl);
            buf_.erase(0, nl + 1);
            if (!line.empty() && line.back() == '\r') line.pop_back();
            return line;
        }
        pollfd p{fd_, POLLIN, 0};
        int n = poll(&p, 1, static_cast<int>(timeout_.count() * 1000));
        if (n < 0) {
            if (errno == EINTR) {
                check_interrupted();
                continue;
            }
            throw sys_error("poll");
        }
        if (n == 0)
            throw Error("smtp 127.0.0.1:" + std::to_string(port_) + ": expected a reply within " +
                        std::to_string(timeout_.count()) + " s, found none");
        char tmp[4096];
        ssize_t r = recv(fd_, tmp, sizeof tmp, 0);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            throw sys_error("smtp recv from 127.0.0.1:" + std::to_string(port_));
        }
        if (r == 0)
            throw Error("smtp 127.0.0.1:" + std::to_string(port_) +
                        ": expected a reply, found the connection closed");
        buf_.append(tmp, static_cast<size_t>(r));
    }
}

// Reads a possibly multi-line reply ("250-..." continued, "250 ..." last).
SmtpReply SmtpClient::read_reply() {
    SmtpReply r;
    for (;;) {
        std::string line = read_line();
        if (line.size() < 3 || !std::isdigit(static_cast<unsigned char>(line[0])))
            throw Error("smtp 127.0.0.1:" + std::to_string(port_) +
                        ": expected a reply line, found \"" + line + "\"");
        r.code = std::stoi(line.substr(0, 3));
        if (!r.text.empty()) r.text += '\n';
        r.text += line;
        if (line.size() == 3 || line[3] != '-') return r;
    }
}

} // namespace compat
