// app_picker.c — a list overlay's events in the window (see app_picker.h).
#include "app_picker.h"

void app_picker_fit(App *a, Picker *p, PickerLayout *pl)
{
    int w, h;
    SDL_GetRendererOutputSize(a->screen.r, &w, &h);
    picker_layout(p, pl, w, h, app_layout(a)->s);
    picker_scroll_to_sel(p, pl->rows_fit);
}

AppPick app_picker_event(App *a, Picker *p, const SDL_Event *e, SDL_Keycode toggle)
{
    if (!p->open) return APP_PICK_NONE;
    PickerLayout pl;
    app_picker_fit(a, p, &pl);
    if (e->type == SDL_MOUSEBUTTONDOWN && e->button.button == SDL_BUTTON_LEFT && !a->ov.help) {
        int x, y;
        app_to_output(a, e->button.x, e->button.y, &x, &y);
        const int i = picker_hit(&pl, p, x, y);
        if (i >= 0) {
            picker_select(p, i);
            return APP_PICK_CHOOSE;
        }
        if (!rect_contains(pl.box, x, y)) p->open = false;
        return APP_PICK_TAKEN;
    }
    if (e->type == SDL_KEYDOWN) {
        const SDL_Keycode sym = e->key.keysym.sym;
        switch (sym) {
        case SDLK_UP: picker_move(p, -1); break;
        case SDLK_DOWN: picker_move(p, 1); break;
        case SDLK_PAGEUP: picker_move(p, -pl.rows_fit); break;
        case SDLK_PAGEDOWN: picker_move(p, pl.rows_fit); break;
        case SDLK_HOME: picker_select(p, 0); break;
        case SDLK_END: picker_select(p, p->n - 1); break;
        case SDLK_RETURN:
        case SDLK_KP_ENTER: return p->sel >= 0 && p->sel < p->n ? APP_PICK_CHOOSE : APP_PICK_TAKEN; // -1: none listed
        case SDLK_l: return APP_PICK_LANG; // (the caller switches: the list is in both languages)
        default:
            if (sym == SDLK_ESCAPE || sym == toggle) p->open = false;
            return APP_PICK_TAKEN;
        }
        picker_scroll_to_sel(p, pl.rows_fit);
        return APP_PICK_TAKEN;
    }
    if (e->type == SDL_MOUSEWHEEL) {
        int dy = e->wheel.direction == SDL_MOUSEWHEEL_FLIPPED ? -e->wheel.y : e->wheel.y;
        picker_move(p, -dy);
        picker_scroll_to_sel(p, pl.rows_fit);
        return APP_PICK_TAKEN;
    }
    // nothing under the overlay
    return e->type == SDL_MOUSEBUTTONDOWN || e->type == SDL_MOUSEBUTTONUP ? APP_PICK_TAKEN : APP_PICK_NONE;
}
