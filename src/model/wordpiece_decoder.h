// Moved: the WordPiece decoder lives in its tokenizer folder.
#pragma once

#include "model/tokenizers/wordpiece/wordpiece_decoder.h"
