// chrome.h — the chrome around the heatmaps: the header, the legend, the narration,
// the timeline of steps, the batch and head tabs with the status line, and the window's overlays (help,
// toast, export progress: Overlays of view.h). render_frame calls them in its draw order; each draws
// through paint.h only, from the Layout of the frame and what the view prepared for it (Frame,
// frame.h): none asks the recipes or the scene while it paints.
#ifndef ATTNVIZ_CHROME_H
#define ATTNVIZ_CHROME_H

#include "frame.h"
#include "layout.h"
#include "paint.h"
#include "trace.h"
#include "view.h"

// The header: the stage's title, its shape badge, the study and lab badges, the formula
// with its numbers (a lesson with checkpoints: the loss curve beside it).
void chrome_draw_header(Canvas *cv, const Layout *L, const Frame *F, const Trace *tr, const View *v);
// One row per colour scale of the frame (name, lowest value, ramp, highest value), then
// swatches for the masked, NaN and changed looks the frame shows (mask_text: the masked
// cells' text, "−∞").
void chrome_draw_legend(Canvas *cv, const Layout *L, const View *v, const char *mask_text);
// The stage's narration in its box, at one size for the whole lesson.
void chrome_draw_narration(Canvas *cv, const Layout *L, const Frame *F, const Trace *tr, const View *v);
// One slot per step ("N  Name", shrunk, then on two lines as room runs out),
// past steps tinted, the current one in the accent colour, and one dot per
// stage of the step with the current stage's filled.
void chrome_draw_timeline(Canvas *cv, const Layout *L, const Frame *F, const Trace *tr, const View *v);
// The batch and head tabs (heads dimmed where they do not matter for the
// stage) and the status line at the right: play state, palette, the help hint.
// ov (may be NULL): the window's "Lessons…" button takes room at the right.
void chrome_draw_tabs(Canvas *cv, const Layout *L, const Frame *F, const Trace *tr, const View *v,
                      const Overlays *ov);
// The help overlay listing every key, shrunk to fit the window.
void chrome_draw_help(Canvas *cv, const Layout *L, const View *v);
// The size the help's key table is drawn at: the largest (from L->px_help down) at which
// its three columns fit.
int chrome_help_px(Canvas *cv, const Layout *L, const View *v);
// ov->toast above the narration, fading with ov->toast_alpha (nothing when unset).
void chrome_draw_toast(Canvas *cv, const Layout *L, const Overlays *ov);
// The text box of a language model's input (Overlays.text_box), over the header.
void chrome_draw_text_box(Canvas *cv, const Layout *L, const View *v, const Overlays *ov);
// The window's export (E): frames done of total, over the heatmaps (nothing
// when ov->export_total is 0).
// A button of the status row ("Lessons…", "What if…"): pressed (on) or not.
void chrome_draw_button(Canvas *cv, const Layout *L, Rect b, bool on, const char *text);
// The what-if lab: the "What if…" button (window only) and, when open, its switches.
void chrome_draw_lab_button(Canvas *cv, const Layout *L, const View *v, const Overlays *ov);
void chrome_draw_lab_menu(Canvas *cv, const Layout *L, const View *v, const Overlays *ov);
// The "Study" button (when ov->study), left of "What if…".
void chrome_draw_study_button(Canvas *cv, const Layout *L, const View *v, const Overlays *ov);
// The study mode's box where the narration goes: the question with the answer being
// typed, or the feedback on an answered one (right or not, the answer, its derivation).
struct Study;
void chrome_draw_study(Canvas *cv, const Layout *L, const Frame *F, const Trace *tr, const View *v,
                       const struct Study *s);
void chrome_draw_export_progress(Canvas *cv, const Layout *L, const View *v, const Overlays *ov);

#endif
