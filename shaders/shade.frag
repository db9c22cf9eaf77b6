// Shading of the skin: two lights of different colours (the CSE169 brief), two-sided (some course meshes wind
// inwards), and the weight views.
//   mode 0: shaded; 1: the viewed joint's weight as greyscale (0 black, 1 white); 2: influence count
//   (0 red, 1 blue, 2 green, 3 yellow, 4 orange); 3: shaded with unweighted vertices in magenta; 4: flat colour
//   (wireframe overlay); 5: the check score through `score_colour`, which src/render/score.rs generates and
//   prepends (the same map as the Check panel's legend).

in vec3 v_position;
in vec3 v_normal;
in float v_weight;
in float v_influences;
in float v_unweighted;
in float v_score;

uniform int mode;
uniform vec3 eye;
uniform vec4 flat_color;

layout (location = 0) out vec4 out_color;

vec3 lit(vec3 albedo) {
    vec3 n = normalize(v_normal);
    vec3 to_eye = normalize(eye - v_position);
    if (dot(n, to_eye) < 0.0) n = -n;
    vec3 key_dir = normalize(vec3(0.6, 0.8, 0.5));
    vec3 key_color = vec3(1.0, 0.86, 0.70);
    vec3 fill_dir = normalize(vec3(-0.7, 0.2, -0.4));
    vec3 fill_color = vec3(0.35, 0.45, 0.85);
    vec3 ambient = vec3(0.16, 0.16, 0.18);
    float key = max(dot(n, key_dir), 0.0);
    float fill = max(dot(n, fill_dir), 0.0);
    vec3 h = normalize(key_dir + to_eye);
    float spec = pow(max(dot(n, h), 0.0), 32.0) * 0.25;
    return albedo * (ambient + key * key_color + fill * fill_color) + spec * key_color;
}

void main() {
    if (mode == 1) {
        out_color = vec4(vec3(clamp(v_weight, 0.0, 1.0)), 1.0);
    } else if (mode == 2) {
        vec3 palette[5] = vec3[5](vec3(0.9, 0.1, 0.1), vec3(0.2, 0.4, 0.9), vec3(0.2, 0.8, 0.3),
                                  vec3(0.95, 0.85, 0.2), vec3(1.0, 0.5, 0.1));
        int i = clamp(int(v_influences + 0.5), 0, 4);
        out_color = vec4(lit(palette[i]), 1.0);
    } else if (mode == 3) {
        vec3 base = lit(vec3(0.7));
        out_color = vec4(mix(base, vec3(1.0, 0.0, 1.0), step(0.01, v_unweighted)), 1.0);
    } else if (mode == 5) {
        out_color = vec4(lit(score_colour(v_score)), 1.0);
    } else if (mode == 4) {
        out_color = flat_color;
    } else {
        out_color = vec4(lit(vec3(0.78, 0.74, 0.70)), 1.0);
    }
}
