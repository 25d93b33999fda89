// common/tensorboard: CRC-32C against published vectors, TFRecord framing, the hand-encoded
// Event protos against bytes worked out from the wire format, and SummaryWriter's file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/tensorboard/crc32c.h"
#include "common/tensorboard/event_proto.h"
#include "common/tensorboard/summary_writer.h"
#include "common/tensorboard/tf_record.h"

namespace lmtrain::tensorboard {
namespace {

namespace fs = std::filesystem;

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

uint64_t ReadLittleEndian(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = bytes.size(); i-- > 0;) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}

// The records of a TFRecord file, checking every length and CRC on the way.
std::vector<std::string> ReadRecords(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string file = buffer.str();
  std::vector<std::string> records;
  size_t at = 0;
  while (at < file.size()) {
    EXPECT_GE(file.size() - at, 16u) << "torn record at " << at;
    if (file.size() - at < 16) break;
    const std::string_view header(file.data() + at, 8);
    const uint64_t length = ReadLittleEndian(header);
    EXPECT_EQ(ReadLittleEndian(std::string_view(file.data() + at + 8, 4)),
              MaskCrc32c(Crc32c(header)));
    const std::string_view data(file.data() + at + 12, length);
    EXPECT_EQ(ReadLittleEndian(std::string_view(file.data() + at + 12 + length, 4)),
              MaskCrc32c(Crc32c(data)));
    records.emplace_back(data);
    at += 16 + length;
  }
  return records;
}

class FixedClock final : public Clock {
 public:
  explicit FixedClock(int64_t ms) : ms_(ms) {}
  int64_t NowMs() const override { return ms_; }

 private:
  int64_t ms_;
};

TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c(""), 0x00000000u);
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);  // The CRC catalogue's check value.
  EXPECT_EQ(Crc32c("a"), 0xC1D04330u);
  // RFC 3720 (iSCSI) B.4: 32 bytes of zeros, of 0xFF, ascending and descending.
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  EXPECT_EQ(Crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(descending), 0x113FDB5Cu);
}

TEST(Crc32cTest, ExtendEqualsOneShot) {
  EXPECT_EQ(ExtendCrc32c(Crc32c("12345"), "6789"), Crc32c("123456789"));
  EXPECT_EQ(ExtendCrc32c(0, "123456789"), 0xE3069283u);
}

TEST(Crc32cTest, MaskRotatesAndAdds) {
  EXPECT_EQ(MaskCrc32c(0), 0xa282ead8u);
  // 0xE3069283 rotated right by 15 is 0x2507C60D; plus the constant, modulo 2^32.
  EXPECT_EQ(MaskCrc32c(0xE3069283u), 0x2507C60Du + 0xa282ead8u);
  EXPECT_EQ(MaskCrc32c(1), (1u << 17) + 0xa282ead8u);
}

TEST(TfRecordTest, FramesLengthDataAndTheirMaskedCrcs) {
  const std::string framed = FrameTfRecord("abc");
  ASSERT_EQ(framed.size(), 8u + 4 + 3 + 4);
  EXPECT_EQ(framed.substr(0, 8), Bytes({3, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(ReadLittleEndian(framed.substr(8, 4)), MaskCrc32c(Crc32c(framed.substr(0, 8))));
  EXPECT_EQ(framed.substr(12, 3), "abc");
  EXPECT_EQ(ReadLittleEndian(framed.substr(15, 4)), MaskCrc32c(Crc32c("abc")));
  EXPECT_EQ(FrameTfRecord("").size(), 16u);
  // A length needing more than one byte is little-endian.
  EXPECT_EQ(FrameTfRecord(std::string(300, 'x')).substr(0, 8),
            Bytes({0x2C, 0x01, 0, 0, 0, 0, 0, 0}));
}

TEST(TfRecordTest, WriterAppendsRecordsAndRefusesAnExistingFile) {
  const std::string path = ::testing::TempDir() + "/tf_record_test.tfrecord";
  fs::remove(path);
  auto writer = TfRecordWriter::Create(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)->Write("first").ok());
  // Unbuffered: the record is in the file before Write returns.
  EXPECT_EQ(fs::file_size(path), 16u + 5);
  ASSERT_TRUE((*writer)->Write(std::string(1000, 'y')).ok());
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ((*writer)->Write("late").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadRecords(path), (std::vector<std::string>{"first", std::string(1000, 'y')}));
  EXPECT_EQ(TfRecordWriter::Create(path).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(TfRecordWriter::Create("/proc/no/such/dir/x").status().code(),
            absl::StatusCode::kInternal);
}

TEST(EventProtoTest, ScalarEventBytes) {
  // Event{wall_time: 1.5, step: 3, summary{value{tag: "a", simple_value: 2.0}}}
  const std::string expected =
      Bytes({0x09, 0,    0,   0, 0,   0, 0, 0xF8, 0x3F,  // field 1, fixed64: 1.5
             0x10, 0x03,                                 // field 2, varint: 3
             0x2A, 0x0A,                                 // field 5 (summary), 10 bytes
             0x0A, 0x08,                                 //   Summary field 1 (value), 8 bytes
             0x0A, 0x01, 'a',                            //     Value field 1 (tag): "a"
             0x15, 0,    0,   0, 0x40});                 //     Value field 2, fixed32: 2.0f
  EXPECT_EQ(EncodeScalarEvent(1.5, 3, "a", 2.0f), expected);
}

TEST(EventProtoTest, StepZeroIsLeftOutAndLargeStepsAreVarints) {
  const std::string zero = EncodeScalarEvent(1.5, 0, "a", 2.0f);
  EXPECT_EQ(zero.substr(9, 2), Bytes({0x2A, 0x0A}));  // Straight from wall_time to summary.
  const std::string big = EncodeScalarEvent(1.5, 300, "a", 2.0f);
  EXPECT_EQ(big.substr(9, 3), Bytes({0x10, 0xAC, 0x02}));
}

TEST(EventProtoTest, FileVersionEventBytes) {
  std::string expected = Bytes({0x09, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F, 0x1A, 13});
  expected += "brain.Event:2";
  EXPECT_EQ(EncodeFileVersionEvent(1.5, kFileVersion), expected);
}

TEST(SummaryWriterTest, WritesVersionThenScalarsIntoANamedFile) {
  const fs::path dir = fs::path(::testing::TempDir()) / "summary_writer_test" / "run";
  fs::remove_all(dir.parent_path());
  FixedClock clock(1700000000250);
  SummaryWriterOptions options;
  options.log_dir = dir.string();
  options.hostname = "node7";
  options.clock = &clock;
  auto writer = SummaryWriter::Create(options);
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ((*writer)->path(), (dir / "events.out.tfevents.1700000000.node7").string());
  ASSERT_TRUE((*writer)->AddScalar("train/loss", 2.5, 10).ok());
  ASSERT_TRUE((*writer)->AddScalar("eval/loss", 0.1, 20).ok());  // Stored as float32.
  const std::vector<std::string> records = ReadRecords((*writer)->path());
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0], EncodeFileVersionEvent(1700000000.25, "brain.Event:2"));
  EXPECT_EQ(records[1], EncodeScalarEvent(1700000000.25, 10, "train/loss", 2.5f));
  EXPECT_EQ(records[2], EncodeScalarEvent(1700000000.25, 20, "eval/loss", 0.1f));
  ASSERT_TRUE((*writer)->Close().ok());

  // A second writer in the same second gets the next free name.
  auto second = SummaryWriter::Create(options);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*second)->path(), (dir / "events.out.tfevents.1700000000.node7.1").string());
}

TEST(SummaryWriterTest, ErrorsNameTheFolder) {
  SummaryWriterOptions options;
  EXPECT_EQ(SummaryWriter::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
  const fs::path file = fs::path(::testing::TempDir()) / "summary_writer_not_a_dir";
  std::ofstream(file) << "x";
  options.log_dir = (file / "run").string();
  const absl::Status status = SummaryWriter::Create(options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_NE(status.message().find(options.log_dir), std::string::npos) << status;
}

}  // namespace
}  // namespace lmtrain::tensorboard
