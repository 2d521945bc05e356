// lang.h — the languages of the interface and the narration (a leaf: the lesson, the
// key table, the fonts and the strings all name one without including each other).
#ifndef ATTNVIZ_LANG_H
#define ATTNVIZ_LANG_H

typedef enum Lang { LANG_EN, LANG_ZH, LANG_COUNT } Lang;

#endif
