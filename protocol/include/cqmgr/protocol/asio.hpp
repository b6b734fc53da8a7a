// Single place that pulls in Boost.Asio.  Boost 1.74's awaitable.hpp uses
// std::exchange without including <utility>; GCC 12 needs it included first.
#pragma once

// clang-format off
#include <utility>
#include <boost/asio.hpp>
// clang-format on

namespace cqmgr {
namespace asio = boost::asio;
using error_code = boost::system::error_code;
template <class T> using awaitable = boost::asio::awaitable<T>;
using Clock = std::chrono::steady_clock;
} // namespace cqmgr
