// playback.h — time-based stepping through the stages and easing curves.
// The app feeds it elapsed seconds; it never reads a clock itself.
#ifndef ATTNVIZ_PLAYBACK_H
#define ATTNVIZ_PLAYBACK_H

#include <stdbool.h>

#define PLAYBACK_ANIM_SECONDS 1.6   // one transition at speed 1
#define PLAYBACK_DWELL_SECONDS 2.4  // settled time before auto-advance
#define PLAYBACK_EDIT_SECONDS 0.45 // an edit's numbers turning from the old into the new (the lab)
#define PLAYBACK_MIN_SPEED 0.25f
#define PLAYBACK_MAX_SPEED 4.0f

typedef struct Playback {
    int stage, n_stages;
    double t;       // seconds (already multiplied by speed) since entering stage
    bool playing;
    float speed;
    bool held;      // time stands still inside the transition (the scrub bar, K, frame steps)
    double edit_t;  // wall seconds since the what-if lab's last edit (its own transition: neither
                    // held nor sped up); PLAYBACK_EDIT_SECONDS or more: none running
} Playback;

// Frames of one transition for stepping it frame by frame (30 per second at speed 1).
#define PLAYBACK_SCRUB_FRAMES 48

void playback_init(Playback *pb, int n_stages);
// Jumps to stage (clamped to [0, n-1]); animate=false shows it settled.
void playback_goto(Playback *pb, int stage, bool animate);
void playback_next(Playback *pb);
void playback_prev(Playback *pb);   // shows the previous stage settled
void playback_toggle(Playback *pb); // at the end, play restarts from stage 0
void playback_set_speed(Playback *pb, float speed); // clamped
// K: stops time where it is (inside a transition, or at its end), or lets it run on.
void playback_hold(Playback *pb, bool held);
// The transition into the current stage at progress p in [0, 1], held there (dragging
// the scrub bar).
void playback_scrub(Playback *pb, float p);
// One frame of the transition forward (dir > 0) or back, held: from a settled stage, a
// step back enters its transition from the end.
void playback_step_frame(Playback *pb, int dir);
// The transition's frame shown, 0 … PLAYBACK_SCRUB_FRAMES.
int playback_frame(const Playback *pb);
// Advances by dt wall seconds; auto-advances when playing. Returns true if the stage changed.
bool playback_update(Playback *pb, double dt);
// An edit's transition starts now (the lab changed the numbers).
void playback_start_edit(Playback *pb);
// Its progress in [0, 1] (1: none running), and whether one is running.
float playback_edit_progress(const Playback *pb);
bool playback_editing(const Playback *pb);
// Linear transition progress in [0,1].
float playback_progress(const Playback *pb);
bool playback_animating(const Playback *pb);
// Reduced motion (the page's prefers-reduced-motion): the stage's transition and an edit's
// shown at their end at once (a transition held inside stays held).
void playback_skip_motion(Playback *pb);

float ease_in_out_cubic(float x);  // 0→0, 1→1, flat ends
float ease_out_cubic(float x);
float ease_clamp01(float x);
// Progress of item i of n when items run one after another with overlap
// (0 = sequential, 1 = all at once), mapped from overall progress p.
float ease_stagger(float p, int i, int n, float overlap);

#endif
