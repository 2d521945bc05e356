// export_plan.c — what an export draws: its options' defaults, the frames of its plan
// (each stage's transition, its parts in projector mode, a GIF's or MP4's holds).
#include "export.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#include "layout.h"
#include "playback.h"

void export_options_init(ExportOptions *o)
{
    memset(o, 0, sizeof *o);
    o->width = 1280;
    o->height = 720;
    o->fps = 30;
    o->hold = -1.0;
    o->loop = -1;
    o->zlib_level = 1;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    o->threads = n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

int export_hold_ticks(const ExportOptions *o)
{
    if (!export_format_info(o->format)->animated) return 0;
    double hold = o->hold < 0.0 ? EXPORT_DEFAULT_HOLD : o->hold;
    return (int)lround(hold * o->fps);
}

int export_plan(ExportFrame *out, int max, int n_stages, int stage_filter, bool animate, int fps,
                const int *parts, int hold_ticks)
{
    // A transition lasts PLAYBACK_ANIM_SECONDS; its frames run at 1/fps steps and
    // end settled (anim = 1), so stills are the last frame of each transition.
    // A stage shown in parts: one settled frame more for each part after the first.
    int per = animate ? (int)ceil(PLAYBACK_ANIM_SECONDS * fps) : 1;
    if (per < 1) per = 1;
    // A GIF or MP4 holds each settled frame hold_ticks frames longer (a part after the
    // first: that long).
    int n = 0;
    long t = 0; // 1/fps frames so far
    for (int s = 0; s < n_stages; s++) {
        if (stage_filter >= 0 && s != stage_filter) continue;
        int n_parts = parts && parts[s] > 1 ? parts[s] : 1;
        for (int k = 0; k < per + n_parts - 1; k++, n++) {
            int ticks = k < per - 1 ? 1 : k == per - 1 ? 1 + hold_ticks : hold_ticks > 0 ? hold_ticks : 1;
            if (n < max) {
                out[n].stage = s;
                out[n].part = k < per ? 0 : k - per + 1;
                out[n].anim = k < per ? (float)(k + 1) / (float)per : 1.0f;
                out[n].time_s = animate ? (double)t / fps : (double)n;
                out[n].ticks = ticks;
            }
            t += ticks;
        }
    }
    return n;
}

void export_parts(const Trace *tr, const View *base, int w, int h, int *parts)
{
    View v = *base;
    v.anim = 1.0f, v.part = 0, v.playing = false;
    view_reset_zoom(&v);
    for (int s = 0; s < tr->n; s++) {
        v.stage = s;
        parts[s] = v.projector ? layout_projector_parts(tr, &v, w, h) : 1;
    }
}
