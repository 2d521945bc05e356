// keymap.c — the window's keys (see keymap.h).
#include "keymap.h"

#include <string.h>

#include "i18n.h"

#define B(k, a) {k, KEY_ACT_##a}

const KeyRow KEYMAP_ROWS[] = {
    // viewing
    {KEYS_VIEW, "keys.next", {B("Right", NEXT), B("Space", NEXT), B("PageDown", NEXT)}},
    {KEYS_VIEW, "keys.prev", {B("Left", PREV), B("PageUp", PREV)}},
    {KEYS_VIEW, "keys.ends", {B("Home", FIRST), B("End", LAST)}},
    {KEYS_VIEW, "keys.step", {B("1", DIGIT), B("2", DIGIT), B("3", DIGIT), B("4", DIGIT), B("5", DIGIT),
                              B("6", DIGIT), B("7", DIGIT), B("8", DIGIT), B("9", DIGIT)}},
    {KEYS_VIEW, "keys.play", {B("P", PLAY)}},
    {KEYS_VIEW, "keys.speed", {B("+", FASTER), B("=", FASTER), B("Keypad +", FASTER), B("-", SLOWER),
                               B("Keypad -", SLOWER)}},
    {KEYS_VIEW, "keys.head", {B("Shift+Tab", HEAD_PREV), B("Tab", HEAD_NEXT), B("]", HEAD_NEXT), B("[", HEAD_PREV)}},
    {KEYS_VIEW, "keys.batch", {B("Shift+B", BATCH_PREV), B("B", BATCH_NEXT)}},
    {KEYS_VIEW, "keys.layer", {B("Shift+J", LAYER_PREV), B("J", LAYER_NEXT)}},
    {KEYS_VIEW, "keys.model_view", {B("A", MODEL_VIEW)}},
    {KEYS_VIEW, "keys.text", {B("I", TEXT)}},
    {KEYS_VIEW, "keys.temperature", {B("Ctrl+Up", WARMER), B("Ctrl+Down", COOLER)}},
    {KEYS_VIEW, "keys.values", {B("V", VALUES)}},
    {KEYS_VIEW, "keys.palette", {B("C", PALETTE)}},
    {KEYS_VIEW, "keys.prob_scale", {B("G", PROB_SCALE)}},
    {KEYS_VIEW, "keys.lang", {B("L", LANG)}},
    {KEYS_VIEW, "keys.open", {B("O", OPEN)}},
    {KEYS_VIEW, "keys.fullscreen", {B("F", FULLSCREEN)}},
    {KEYS_VIEW, "keys.save", {B("S", SAVE)}},
    {KEYS_VIEW, "keys.export", {B("E", EXPORT)}},
    {KEYS_VIEW, "keys.wheel", {{NULL, KEY_ACT_NONE}}},
    {KEYS_VIEW, "keys.zoom", {B("Shift+Z", ZOOM_OUT), B("Z", ZOOM_IN)}},
    {KEYS_VIEW, "keys.pan", {B("Shift+Left", PAN), B("Shift+Right", PAN), B("Shift+Up", PAN), B("Shift+Down", PAN)}},
    {KEYS_VIEW, "keys.zoom_reset", {B("0", ZERO), B("Keypad 0", ZERO)}},
    {KEYS_VIEW, "keys.help", {B("?", HELP), B("Shift+/", HELP), B("F1", HELP)}},
    {KEYS_VIEW, "keys.escape", {B("Escape", ESCAPE)}},
    {KEYS_VIEW, "keys.quit", {B("Q", QUIT), B("Ctrl+Q", QUIT)}},
    {KEYS_VIEW, "keys.cursor", {B("Y", CURSOR)}},
    {KEYS_VIEW, "keys.mouse", {{NULL, KEY_ACT_NONE}}},
    // the what-if lab (lab.c handles its keys)
    {KEYS_LAB, "keys.lab_select", {{NULL, KEY_ACT_NONE}}},
    {KEYS_LAB, "keys.lab_move", {{NULL, KEY_ACT_NONE}}},
    {KEYS_LAB, "keys.lab_type", {{NULL, KEY_ACT_NONE}}},
    {KEYS_LAB, "keys.lab_drag", {{NULL, KEY_ACT_NONE}}},
    {KEYS_LAB, "keys.lab_mask", {{NULL, KEY_ACT_NONE}}},
    {KEYS_LAB, "keys.lab_switches", {{NULL, KEY_ACT_NONE}}},
    {KEYS_LAB, "keys.lab_delta", {{NULL, KEY_ACT_NONE}}},
    {KEYS_LAB, "keys.lab_undo", {{NULL, KEY_ACT_NONE}}},
    {KEYS_LAB, "keys.lab_redo", {{NULL, KEY_ACT_NONE}}},
    {KEYS_LAB, "keys.lab_reset", {{NULL, KEY_ACT_NONE}}},
    {KEYS_LAB, "keys.lab_save", {{NULL, KEY_ACT_NONE}}},
    {KEYS_LAB, "keys.lab_escape", {{NULL, KEY_ACT_NONE}}},
    // learning and experiments: the training slider, training live, the backward pass, compare
    {KEYS_LAB, "keys.checkpoint", {B("U", CKPT_NEXT), B("Shift+U", CKPT_PREV)}},
    {KEYS_LAB, "keys.train", {B("Shift+R", TRAIN_STEP), B("R", TRAIN)}},
    {KEYS_LAB, "keys.backward", {B("Ctrl+B", BACKWARD)}},
    {KEYS_LAB, "keys.sampling", {B("Ctrl+Shift+Up", TOP_K), B("Ctrl+Shift+Down", TOP_P)}},
    {KEYS_LAB, "keys.generate", {B("Ctrl+Shift+G", GENERATE_DRAW), B("Ctrl+G", GENERATE)}},
    {KEYS_LAB, "keys.compare", {B("Ctrl+Shift+D", COMPARE_PREV), B("Ctrl+D", COMPARE_NEXT), B("Shift+D", COMPARE_MENU)}},
    // the study mode (T here; the study box, study_ui.c, handles the rest)
    {KEYS_STUDY, "keys.study", {B("T", STUDY)}},
    {KEYS_STUDY, "keys.study_type", {{NULL, KEY_ACT_NONE}}},
    {KEYS_STUDY, "keys.study_column", {{NULL, KEY_ACT_NONE}}},
    {KEYS_STUDY, "keys.study_hint", {{NULL, KEY_ACT_NONE}}},
    {KEYS_STUDY, "keys.study_show", {{NULL, KEY_ACT_NONE}}},
    {KEYS_STUDY, "keys.study_feedback", {{NULL, KEY_ACT_NONE}}},
    // presenting
    {KEYS_PRESENT, "keys.present", {B("F5", PRESENT)}},
    {KEYS_PRESENT, "keys.black", {B(".", BLACK)}},
    {KEYS_PRESENT, "keys.pin", {{NULL, KEY_ACT_NONE}}},
    {KEYS_PRESENT, "keys.clear_pins", {B("X", CLEAR_PINS)}},
    {KEYS_PRESENT, "keys.spotlight", {B("H", SPOTLIGHT)}},
    {KEYS_PRESENT, "keys.laser", {B("Ctrl+L", LASER)}},
    {KEYS_PRESENT, "keys.hold", {B("K", HOLD)}},
    {KEYS_PRESENT, "keys.loop", {B("N", LOOP_NEXT), B("Shift+N", LOOP_PREV)}},
    {KEYS_PRESENT, "keys.frames", {B("Ctrl+Left", FRAME_BACK), B("Ctrl+Right", FRAME_FORWARD)}},
    {KEYS_PRESENT, "keys.projector", {B("M", PROJECTOR)}},
};

const size_t KEYMAP_N_ROWS = sizeof KEYMAP_ROWS / sizeof KEYMAP_ROWS[0];

void keymap_help(KeySection s, Lang lang, char *out, size_t n)
{
    size_t len = 0;
    if (n) out[0] = '\0';
    for (size_t i = 0; i < KEYMAP_N_ROWS && n; i++) {
        if (KEYMAP_ROWS[i].section != s) continue;
        const char *t = i18n_get(lang, KEYMAP_ROWS[i].text);
        size_t k = strlen(t), sep = len ? 1 : 0;
        if (len + sep + k + 1 > n) break; // (the buffer holds every section's rows: keymap.c's test)
        if (sep) out[len++] = '\n';
        memcpy(out + len, t, k + 1);
        len += k;
    }
}
