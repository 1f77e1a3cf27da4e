#include "tests/support/png_image.h"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace trainsim::testing {

namespace {

std::uint32_t big_endian(const std::string& s, std::size_t at) {
    return (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at])) << 24) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 1])) << 16) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 2])) << 8) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 3]));
}

// The PNG specification's Paeth predictor (ISO/IEC 15948, 9.4).
int paeth(int a, int b, int c) {
    const int p = a + b - c;
    const int pa = std::abs(p - a);
    const int pb = std::abs(p - b);
    const int pc = std::abs(p - c);
    if (pa <= pb && pa <= pc) {
        return a;
    }
    return pb <= pc ? b : c;
}

}  // namespace

PngImage read_png(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto fail = [&](const std::string& why) { return std::runtime_error(path + ": " + why); };
    if (file.size() < 8 || file.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) {
        throw fail("not a PNG file");
    }
    PngImage image;
    int channels = 0;
    std::string compressed;
    for (std::size_t at = 8; at + 8 <= file.size();) {
        const std::uint32_t length = big_endian(file, at);
        const std::string type = file.substr(at + 4, 4);
        if (at + 12 + length > file.size()) {
            throw fail("chunk " + type + " runs past the end");
        }
        const std::size_t data = at + 8;
        if (type == "IHDR") {
            image.width = static_cast<int>(big_endian(file, data));
            image.height = static_cast<int>(big_endian(file, data + 4));
            const int depth = static_cast<unsigned char>(file[data + 8]);
            const int colour = static_cast<unsigned char>(file[data + 9]);
            const int interlace = static_cast<unsigned char>(file[data + 12]);
            channels = colour == 2 ? 3 : colour == 6 ? 4 : 0;
            if (depth != 8 || channels == 0 || interlace != 0) {
                throw fail("only 8-bit RGB or RGBA without interlacing is read");
            }
        } else if (type == "IDAT") {
            compressed.append(file, data, length);
        } else if (type == "IEND") {
            break;
        }
        at = data + length + 4;  // skip the CRC
    }
    if (channels == 0) {
        throw fail("no IHDR chunk");
    }
    const std::size_t stride = static_cast<std::size_t>(image.width) * static_cast<std::size_t>(channels);
    std::vector<unsigned char> raw((stride + 1) * static_cast<std::size_t>(image.height));
    uLongf raw_size = raw.size();
    if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(compressed.data()),
                   compressed.size()) != Z_OK ||
        raw_size != raw.size()) {
        throw fail("corrupt image data");
    }
    // Undo each row's filter (ISO/IEC 15948, 9.2) in place; `prior` is the row above, unfiltered.
    std::vector<unsigned char> prior(stride, 0);
    image.rgb.resize(static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height));
    for (int y = 0; y < image.height; ++y) {
        unsigned char* row = raw.data() + static_cast<std::size_t>(y) * (stride + 1);
        const int filter = row[0];
        unsigned char* px = row + 1;
        for (std::size_t i = 0; i < stride; ++i) {
            const int a = i >= static_cast<std::size_t>(channels) ? px[i - channels] : 0;
            const int b = prior[i];
            const int c = i >= static_cast<std::size_t>(channels) ? prior[i - channels] : 0;
            int predicted = 0;
            switch (filter) {
            case 0:
                break;
            case 1:
                predicted = a;
                break;
            case 2:
                predicted = b;
                break;
            case 3:
                predicted = (a + b) / 2;
                break;
            case 4:
                predicted = paeth(a, b, c);
                break;
            default:
                throw fail("unknown row filter " + std::to_string(filter));
            }
            px[i] = static_cast<unsigned char>(px[i] + predicted);
        }
        std::copy(px, px + stride, prior.begin());
        for (int x = 0; x < image.width; ++x) {
            const unsigned char* p = px + static_cast<std::size_t>(x) * static_cast<std::size_t>(channels);
            image.rgb[static_cast<std::size_t>(y) * static_cast<std::size_t>(image.width) +
                      static_cast<std::size_t>(x)] = {p[0], p[1], p[2]};
        }
    }
    return image;
}

}  // namespace trainsim::testing
