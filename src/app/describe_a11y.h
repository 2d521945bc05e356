// describe_a11y.h — the frame on screen for assistive technology: what the page's
// accessible layer beside its canvas is generated from (web.h's attnviz_a11y).
#ifndef ATTNVIZ_DESCRIBE_A11Y_H
#define ATTNVIZ_DESCRIBE_A11Y_H

#include <stdio.h>

#include "app.h"

// The window's frame as JSON: its title, formula, narration and alt text as --describe
// writes them, the study box's question, each panel as a table (caption, row and column
// labels, every cell as the screen writes it: its decimals, the masked cells' text, "?"
// for a result still hidden) and the pointed cell (the cell cursor's, else the one under
// the pointer) with its tooltip's text; null when none is.
void describe_a11y_write(App *a, FILE *f);

#endif
