#include "util/gzip.hpp"

#include <zlib.h>

#include <array>

namespace preflight {

namespace {

constexpr int kGzipWindow = 15 + 16;  // the largest window, with a gzip header and trailer
constexpr std::size_t kChunk = 64 << 10;

Bytef* bytes(std::string_view data) {
  // zlib's next_in is not const-qualified; it never writes through it.
  return reinterpret_cast<Bytef*>(
      const_cast<char*>(data.data()));  // NOLINT(cppcoreguidelines-pro-type-const-cast)
}

}  // namespace

std::string gzip(std::string_view data) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, kGzipWindow, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::bad_alloc();
  std::string out;
  out.resize(deflateBound(&stream, static_cast<uLong>(data.size())));
  stream.next_in = bytes(data);
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (status != Z_STREAM_END) throw std::bad_alloc();  // deflateBound guarantees room
  return out;
}

Result<std::string> gunzip(std::string_view stream_bytes, std::size_t max_bytes) {
  z_stream stream{};
  if (inflateInit2(&stream, kGzipWindow) != Z_OK) return Error::runtime("gunzip: out of memory");
  stream.next_in = bytes(stream_bytes);
  stream.avail_in = static_cast<uInt>(stream_bytes.size());
  std::string out;
  std::array<char, kChunk> chunk{};
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    stream.next_out = reinterpret_cast<Bytef*>(chunk.data());
    stream.avail_out = chunk.size();
    status = inflate(&stream, Z_NO_FLUSH);
    if (status != Z_OK && status != Z_STREAM_END) {
      inflateEnd(&stream);
      return Error::bad_input(std::string("not a gzip stream: ") + (stream.msg ? stream.msg : "truncated"));
    }
    out.append(chunk.data(), chunk.size() - stream.avail_out);
    if (out.size() > max_bytes) {
      inflateEnd(&stream);
      return Error::bad_input("a gzip stream inflates to more than " + std::to_string(max_bytes) + " bytes");
    }
  }
  inflateEnd(&stream);
  return out;
}

}  // namespace preflight
