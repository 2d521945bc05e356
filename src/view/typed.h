// typed.h — why a text typed into the window's text box (I) cannot be a language model's
// input, in plain words for a student (the command line's --text keeps the lesson
// rules' form: "--text: input.text: character 13, "e", is not in the vocab; …").
#ifndef ATTNVIZ_TYPED_H
#define ATTNVIZ_TYPED_H

#include <stdbool.h>
#include <stddef.h>

#include "lesson.h"

// Whether text reads as ls's input (its vocab and tokenizer, its context); when it does
// not, why in lang into out: "Character 13, ‘e’, is not one this model knows. It knows:
// a b c …, space." / an empty text / longer than the model's context. ls has a vocab.
bool typed_text_problem(const Lesson *ls, const char *text, Lang lang, char *out, size_t n);

#endif
