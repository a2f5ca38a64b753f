#include "pipeline/document_reader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <sstream>
#include <string>
#include <vector>

#include "temp_dir.h"

namespace tessera::pipeline {
namespace {

using testing::TempDir;

struct ReadAll {
  std::vector<Document> docs;
  std::vector<Problem> problems;
  std::vector<std::string> sequence;  // origins in the order they came
};

ReadAll drain_reader(DocumentReader* reader) {
  ReadAll r;
  while (true) {
    Document doc;
    Problem problem;
    const auto item = reader->next(&doc, &problem);
    if (item == DocumentReader::Item::kEnd) break;
    if (item == DocumentReader::Item::kDocument) {
      r.sequence.push_back(doc.origin);
      r.docs.push_back(std::move(doc));
    } else {
      r.sequence.push_back("problem:" + problem.origin);
      r.problems.push_back(std::move(problem));
    }
  }
  return r;
}

ReadAll read_all(const std::vector<std::string>& inputs, ReaderOptions options = {}) {
  std::unique_ptr<DocumentReader> reader;
  EXPECT_TRUE(DocumentReader::open(inputs, options, &reader).ok());
  return drain_reader(reader.get());
}

TEST(DocumentReader, WalksDirectoriesInSortedOrderAndKeepsDocumentTypes) {
  TempDir dir;
  dir.write("b.txt", "bee");
  dir.write("a.md", "# A");
  dir.write("sub/c.txt", "sea");
  dir.write("sub/z.jsonl", "{\"id\": \"r1\", \"text\": \"one\"}\n{\"id\": 7, \"text\": \"two\"}\n");
  dir.write("ignored.bin", "binary");
  dir.write("notes.rst", "not a document type");
  const ReadAll r = read_all({dir.path()});
  ASSERT_TRUE(r.problems.empty());
  const std::string p = dir.path() + "/";
  EXPECT_EQ(r.sequence, (std::vector<std::string>{p + "a.md", p + "b.txt", p + "sub/c.txt",
                                                  p + "sub/z.jsonl:1", p + "sub/z.jsonl:2"}));
  EXPECT_EQ(r.docs[0].id, p + "a.md");
  EXPECT_EQ(r.docs[0].text, "# A");
  EXPECT_EQ(r.docs[3].id, "r1");
  EXPECT_TRUE(r.docs[4].id.is_number_integer());
  EXPECT_EQ(r.docs[4].id, 7);
  EXPECT_EQ(r.docs[4].text, "two");
}

TEST(DocumentReader, ReportsBadJsonlLinesByNumberAndGoesOn) {
  TempDir dir;
  const std::string path = dir.write("in.jsonl",
                                     "{\"id\": \"ok1\", \"text\": \"fine\"}\n"  // 1
                                     "\n"  // 2: blank, skipped silently
                                     "{\"id\": \"bad\", \"text\": \"unterminated\n"  // 3
                                     "{\"id\": \"nt\"}\n"                 // 4: missing text
                                     "{\"id\": \"num\", \"text\": 12}\n"  // 5: text not a string
                                     "[1, 2]\n"                           // 6: not an object
                                     "{\"id\": null, \"text\": \"x\"}\n"  // 7: id of the wrong type
                                     "{\"text\": \"no id\"}\r\n"  // 8: id defaults to file:line
                                     "{\"id\": 2.5, \"text\": \"float id\"}\n");  // 9
  const ReadAll r = read_all({path});
  ASSERT_EQ(r.docs.size(), 3u);
  EXPECT_EQ(r.docs[0].id, "ok1");
  EXPECT_EQ(r.docs[1].id, path + ":8");
  EXPECT_EQ(r.docs[1].text, "no id");
  EXPECT_EQ(r.docs[2].id, 2.5);
  ASSERT_EQ(r.problems.size(), 5u);
  const std::pair<int, const char*> expected[] = {{3, "malformed JSON"},
                                                  {4, "missing \"text\""},
                                                  {5, "\"text\" must be a string, got number"},
                                                  {6, "expected a JSON object"},
                                                  {7, "\"id\" must be a string or a number"}};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(r.problems[i].origin, path + ":" + std::to_string(expected[i].first));
    EXPECT_NE(r.problems[i].message.find(expected[i].second), std::string::npos)
        << r.problems[i].message;
  }
}

TEST(DocumentReader, BadFilesAreProblemsNotErrors) {
  TempDir dir;
  const std::string good = dir.write("good.txt", "hello");
  const std::string latin1 = dir.write("latin1.txt", "caf\xE9 au lait");
  const std::string missing = dir.write("missing.txt", "here when the inputs are opened");
  const std::string empty_dir = dir.path() + "/empty";
  std::filesystem::create_directories(empty_dir);
  std::unique_ptr<DocumentReader> reader;
  ASSERT_TRUE(DocumentReader::open({latin1, missing, good, empty_dir}, {}, &reader).ok());
  std::filesystem::remove(missing);  // gone before it is read: a problem, not an error
  const ReadAll r = drain_reader(reader.get());
  ASSERT_EQ(r.docs.size(), 1u);
  EXPECT_EQ(r.docs[0].id, good);
  ASSERT_EQ(r.problems.size(), 3u);
  // Directory problems are found when the inputs are expanded, so come first.
  EXPECT_EQ(r.problems[0].origin, empty_dir);
  EXPECT_NE(r.problems[0].message.find("no .txt, .md or .jsonl files"), std::string::npos);
  EXPECT_EQ(r.problems[1].origin, latin1);
  EXPECT_NE(r.problems[1].message.find("not valid UTF-8 at byte 3"), std::string::npos)
      << r.problems[1].message;
  EXPECT_EQ(r.problems[2].origin, missing);
  EXPECT_NE(r.problems[2].message.find("cannot open"), std::string::npos);
}

TEST(DocumentReader, AMissingInputIsRefusedAtOpen) {
  TempDir dir;
  const std::string good = dir.write("good.txt", "hello");
  std::unique_ptr<DocumentReader> reader;
  const Status s = DocumentReader::open({good, dir.path() + "/typo.txt"}, {}, &reader);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("typo.txt: no such file or directory"), std::string::npos)
      << s.message();
}

TEST(DocumentReader, ReadsStdinAsTextOrJsonl) {
  std::istringstream text("all of stdin\nis one document\n");
  ReaderOptions options;
  options.stdin_stream = &text;
  ReadAll r = read_all({"-"}, options);
  ASSERT_EQ(r.docs.size(), 1u);
  EXPECT_EQ(r.docs[0].id, "stdin");
  EXPECT_EQ(r.docs[0].text, "all of stdin\nis one document\n");

  std::istringstream jsonl(
      "{\"id\": 1, \"text\": \"a\"}\nnot json\n{\"id\": 2, \"text\": \"b\"}\n");
  options.stdin_stream = &jsonl;
  options.stdin_format = StdinFormat::kJsonl;
  r = read_all({"-"}, options);
  ASSERT_EQ(r.docs.size(), 2u);
  EXPECT_EQ(r.docs[1].id, 2);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].origin, "stdin:2");
}

// Issue 35: a document is never held past max_document_bytes, whichever way
// it comes, and the reader goes on after one that is over.
TEST(DocumentReader, DocumentsOverTheLimitAreProblemsAndReadingGoesOn) {
  TempDir dir;
  const std::string at_limit = dir.write("at.txt", std::string(16, 'a'));
  const std::string over = dir.write("over.txt", std::string(17, 'o'));
  const std::string records =
      dir.write("r.jsonl", "{\"text\": \"0123456789\"}\n{\"text\":\"ok\"}\n");
  ReaderOptions options;
  options.max_document_bytes = 16;
  const ReadAll r = read_all({at_limit, over, records}, options);
  ASSERT_EQ(r.docs.size(), 2u);
  EXPECT_EQ(r.docs[0].id, at_limit);
  EXPECT_EQ(r.docs[1].id, records + ":2");
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_EQ(r.problems[0].origin, over);
  EXPECT_EQ(r.problems[0].message, "is 17 bytes, over the limit of 16 bytes");
  EXPECT_EQ(r.problems[1].origin, records + ":1");
  EXPECT_EQ(r.problems[1].message, "the line is over the limit of 16 bytes per document");

  std::istringstream endless(std::string(1000, 'z'));
  options.stdin_stream = &endless;
  const ReadAll s = read_all({"-"}, options);
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_EQ(s.problems[0].origin, "stdin");
  EXPECT_EQ(s.problems[0].message,
            "is over the limit of 16 bytes per document (the rest of stdin is not read)");
}

// Issue 35: open() of a FIFO waited for a writer forever (this test hung),
// and a character device was read until memory ran out.
TEST(DocumentReader, SpecialFilesAreProblemsRefusedBeforeReading) {
  TempDir dir;
  const std::string fifo = dir.path() + "/pipe.jsonl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string good = dir.write("good.txt", "hello");
  const ReadAll r = read_all({fifo, "/dev/zero", good});
  ASSERT_EQ(r.docs.size(), 1u);
  EXPECT_EQ(r.docs[0].id, good);
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_EQ(r.problems[0].message, "is a FIFO (named pipe), not a regular file");
  EXPECT_EQ(r.problems[1].message, "is a character device, not a regular file");
}

TEST(DocumentReader, CountsBytesForTheProgressBar) {
  TempDir dir;
  dir.write("a.txt", std::string(100, 'a'));
  dir.write("b.jsonl", "{\"text\": \"x\"}\n");
  std::unique_ptr<DocumentReader> reader;
  ASSERT_TRUE(DocumentReader::open({dir.path()}, {}, &reader).ok());
  EXPECT_EQ(reader->bytes_total(), 114u);
  Document doc;
  Problem problem;
  while (reader->next(&doc, &problem) != DocumentReader::Item::kEnd) {
  }
  EXPECT_EQ(reader->bytes_read(), 114u);
  EXPECT_FALSE(DocumentReader::open({}, {}, &reader).ok());
}

}  // namespace
}  // namespace tessera::pipeline
