// rope.c — rotary position embedding: the frequencies (with Hugging Face's rope_scaling)
// and the turn of one head row. See attention.h.
#include "attention.h"

#include <math.h>

static const double PI = 3.14159265358979323846;

float attn_rope_inv_freq(int i, int d, float theta)
{
    // as Hugging Face computes it in float32: 1 / theta ** (arange(0, d, 2) / d)
    float e = (float)(2 * i) / (float)d;
    return 1.0f / powf(theta, e);
}

// YaRN's attention factor for a scale s (transformers' get_mscale).
static double yarn_mscale(double s, double m) { return s <= 1.0 ? 1.0 : 0.1 * m * log(s) + 1.0; }

// The dimension (of rot) whose wavelength makes `rotations` turns in `max_pos` positions
// (transformers' find_correction_dim).
static double yarn_dim(double rotations, int rot, double base, double max_pos)
{
    return rot * log(max_pos / (rotations * 2.0 * PI)) / (2.0 * log(base));
}

float attn_rope_freqs(const AttnConfig *cfg, int rot, int seq_len, float *inv)
{
    const int half = rot / 2;
    const RopeScale *s = &cfg->rope_scale;
    float theta = cfg->rope_theta;
    if (s->type == ROPE_SCALE_DYNAMIC && seq_len > s->original_max) {
        // dynamic NTK: a larger base once the text is longer than the trained context:
        // base · (factor · L / max − (factor − 1))^(rot / (rot − 2))
        double f = (double)s->factor * seq_len / s->original_max - ((double)s->factor - 1.0);
        theta = (float)((double)theta * pow(f, (double)rot / (rot - 2)));
    }
    for (int p = 0; p < half; p++) inv[p] = attn_rope_inv_freq(p, rot, theta);
    float att = 1.0f;
    switch (s->type) {
    case ROPE_SCALE_NONE:
    case ROPE_SCALE_DYNAMIC: break;
    case ROPE_SCALE_LINEAR: // positions / factor: the same as every frequency / factor
        for (int p = 0; p < half; p++) inv[p] = inv[p] / s->factor;
        break;
    case ROPE_SCALE_LLAMA3: { // Llama 3.1: long wavelengths / factor, short ones kept, a ramp between
        const float lo_wave = (float)s->original_max / s->low_freq_factor;
        const float hi_wave = (float)s->original_max / s->high_freq_factor;
        for (int p = 0; p < half; p++) {
            const float wave = 2.0f * (float)PI / inv[p];
            float f = wave > lo_wave ? inv[p] / s->factor : inv[p];
            if (!(wave < hi_wave) && !(wave > lo_wave)) {
                const float smooth = ((float)s->original_max / wave - s->low_freq_factor) /
                                     (s->high_freq_factor - s->low_freq_factor);
                f = (1.0f - smooth) * f / s->factor + smooth * f;
            }
            inv[p] = f;
        }
        break;
    }
    case ROPE_SCALE_YARN: { // YaRN: interpolate the slow pairs, keep the fast ones, ramp between
        double lo = floor(yarn_dim(s->beta_fast, rot, theta, s->original_max));
        double hi = ceil(yarn_dim(s->beta_slow, rot, theta, s->original_max));
        if (lo < 0) lo = 0;
        if (hi > rot - 1) hi = rot - 1;
        if (lo == hi) hi += 0.001;
        for (int p = 0; p < half; p++) {
            const float pos_freq = powf(theta, (float)(2 * p) / (float)rot);
            const float extra = 1.0f / pos_freq, inter = 1.0f / (s->factor * pos_freq);
            float ramp = (float)(((double)p - lo) / (hi - lo));
            ramp = ramp < 0.0f ? 0.0f : ramp > 1.0f ? 1.0f : ramp;
            const float keep = 1.0f - ramp; // the extrapolation's share
            inv[p] = inter * (1.0f - keep) + extra * keep;
        }
        att = s->attention_factor > 0.0f ? s->attention_factor : (float)yarn_mscale((double)s->factor, 1.0);
        break;
    }
    }
    return att;
}

void attn_rope_row(float *y, const float *x, int d, int rot, int pos, RopeStyle style, const float *inv, float att)
{
    const int half = rot / 2;
    for (int i = rot; i < d; i++) y[i] = x[i]; // partial rotary: the rest passes unturned
    for (int p = 0; p < half; p++) {
        float ang = (float)pos * inv[p];
        float c = cosf(ang), sn = sinf(ang);
        if (att != 1.0f) c = c * att, sn = sn * att; // YaRN's cos·mscale, sin·mscale
        int i0 = style == ROPE_HALF ? p : 2 * p, i1 = style == ROPE_HALF ? p + half : 2 * p + 1;
        // x·cos + rotate(x)·sin, rotate(x) = (-x1, x0) on the pair
        float a = x[i0] * c, b = -x[i1] * sn;
        float a1 = x[i1] * c, b1 = x[i0] * sn;
        y[i0] = a + b;
        y[i1] = a1 + b1;
    }
}
