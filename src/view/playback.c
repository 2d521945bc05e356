// playback.c — stage stepping and easing (see playback.h).
#include "playback.h"

#include "view.h"

void view_init(View *v, const Lesson *ls, Lang lang)
{
    *v = (View){0};
    v->anim = 1.0f;
    v->loop = -1;
    v->show_values = true;
    v->lang = lang;
    v->speed = 1.0f;
    v->lesson = ls;
    view_reset_zoom(v);
}

void view_reset_zoom(View *v)
{
    v->zoom = 1.0f;
    v->zoom_x = v->zoom_y = 0.0f;
    v->zoom_rows = v->zoom_cols = 0;
    v->zoom_row_axis = v->zoom_col_axis = 0;
}

float ease_clamp01(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }

float ease_in_out_cubic(float x)
{
    x = ease_clamp01(x);
    if (x < 0.5f) return 4.0f * x * x * x;
    float f = -2.0f * x + 2.0f;
    return 1.0f - f * f * f * 0.5f;
}

float ease_out_cubic(float x)
{
    x = ease_clamp01(x);
    float f = 1.0f - x;
    return 1.0f - f * f * f;
}

float ease_stagger(float p, int i, int n, float overlap)
{
    if (n <= 1) return ease_clamp01(p);
    // each item lasts d; starts are spaced so the last ends at p = 1
    float d = 1.0f / ((float)n - ((float)n - 1.0f) * ease_clamp01(overlap));
    float start = (1.0f - d) * (float)i / (float)(n - 1);
    return ease_clamp01((p - start) / d);
}

void playback_init(Playback *pb, int n_stages)
{
    *pb = (Playback){0};
    pb->n_stages = n_stages > 0 ? n_stages : 1;
    pb->speed = 1.0f;
    pb->t = PLAYBACK_ANIM_SECONDS; // first stage shown settled
    pb->edit_t = PLAYBACK_EDIT_SECONDS;
}

void playback_start_edit(Playback *pb) { pb->edit_t = 0.0; }

float playback_edit_progress(const Playback *pb) { return ease_clamp01((float)(pb->edit_t / PLAYBACK_EDIT_SECONDS)); }

bool playback_editing(const Playback *pb) { return pb->edit_t < PLAYBACK_EDIT_SECONDS; }

void playback_goto(Playback *pb, int stage, bool animate)
{
    // clamped: playback_prev at the first stage asks for -1; a number key or the scrub bar
    // may name a stage past the last
    if (stage < 0) stage = 0;
    if (stage > pb->n_stages - 1) stage = pb->n_stages - 1;
    pb->stage = stage;
    pb->t = animate ? 0.0 : PLAYBACK_ANIM_SECONDS;
    pb->held = false;
}

void playback_next(Playback *pb)
{
    if (pb->stage + 1 < pb->n_stages)
        playback_goto(pb, pb->stage + 1, true);
    else
        pb->t = PLAYBACK_ANIM_SECONDS; // at the end: finish the animation
}

void playback_prev(Playback *pb) { playback_goto(pb, pb->stage - 1, false); }

void playback_toggle(Playback *pb)
{
    pb->playing = !pb->playing;
    if (pb->playing && pb->stage == pb->n_stages - 1 && !playback_animating(pb))
        playback_goto(pb, 0, true);
}

void playback_set_speed(Playback *pb, float speed)
{
    if (!(speed >= PLAYBACK_MIN_SPEED)) speed = PLAYBACK_MIN_SPEED;
    if (speed > PLAYBACK_MAX_SPEED) speed = PLAYBACK_MAX_SPEED;
    pb->speed = speed;
}

void playback_hold(Playback *pb, bool held)
{
    pb->held = held;
    if (held) pb->playing = false;
}

void playback_scrub(Playback *pb, float p)
{
    playback_hold(pb, true);
    pb->t = (double)ease_clamp01(p) * PLAYBACK_ANIM_SECONDS;
}

int playback_frame(const Playback *pb)
{
    double f = pb->t / PLAYBACK_ANIM_SECONDS * PLAYBACK_SCRUB_FRAMES;
    int k = (int)(f + 0.5);
    return k < 0 ? 0 : k > PLAYBACK_SCRUB_FRAMES ? PLAYBACK_SCRUB_FRAMES : k;
}

void playback_step_frame(Playback *pb, int dir)
{
    int k = playback_frame(pb) + (dir > 0 ? 1 : -1);
    k = k < 0 ? 0 : k > PLAYBACK_SCRUB_FRAMES ? PLAYBACK_SCRUB_FRAMES : k;
    playback_scrub(pb, (float)k / PLAYBACK_SCRUB_FRAMES);
}

bool playback_update(Playback *pb, double dt)
{
    if (dt > 0.0 && playback_editing(pb)) pb->edit_t += dt; // an edit's transition: wall time
    if (pb->held) return false; // the scrub bar holds the time
    if (dt < 0.0) dt = 0.0;
    if (dt > 0.25) dt = 0.25; // a stalled frame does not skip stages
    pb->t += dt * (double)pb->speed;
    if (pb->playing && pb->t >= PLAYBACK_ANIM_SECONDS + PLAYBACK_DWELL_SECONDS) {
        if (pb->stage + 1 < pb->n_stages) {
            playback_goto(pb, pb->stage + 1, true);
            return true;
        }
        pb->playing = false;
    }
    return false;
}

float playback_progress(const Playback *pb)
{
    return ease_clamp01((float)(pb->t / PLAYBACK_ANIM_SECONDS));
}

bool playback_animating(const Playback *pb) { return pb->t < PLAYBACK_ANIM_SECONDS; }

void playback_skip_motion(Playback *pb)
{
    if (!pb->held && pb->t < PLAYBACK_ANIM_SECONDS) pb->t = PLAYBACK_ANIM_SECONDS;
    if (pb->edit_t < PLAYBACK_EDIT_SECONDS) pb->edit_t = PLAYBACK_EDIT_SECONDS;
}
