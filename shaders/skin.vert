// The skin in the viewport: GPU skinning (skinning.glsl is prepended), then the weight of the viewed joint,
// the influence count and the unweighted flag for the weight views, and the check score.

in vec3 position;
in vec3 normal;
in uvec4 joints;
in uvec4 weights;
in float score;

uniform mat4 clip_from_world;
uniform int view_joint;

out vec3 v_position;
out vec3 v_normal;
out float v_weight;
out float v_influences;
out float v_unweighted;
out float v_score;

void main() {
    vec3 sp;
    vec3 sn;
    skin(position, normal, joints, weights, sp, sn);
    float w = 0.0;
    float count = 0.0;
    for (int k = 0; k < 4; k++) {
        if (weights[k] > 0u) {
            count += 1.0;
            if (int(joints[k]) == view_joint) w += float(weights[k]) / 255.0;
        }
    }
    v_position = sp;
    v_normal = sn;
    v_weight = w;
    v_influences = count;
    v_unweighted = count == 0.0 ? 1.0 : 0.0;
    v_score = score;
    gl_Position = clip_from_world * vec4(sp, 1.0);
}
