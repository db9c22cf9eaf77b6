// Linear blend and dual quaternion skinning from the bone texture (see src/render/pack.rs for the layout:
// 9 texels per joint: skinning matrix columns 0-3, normal matrix columns 4-6, dual quaternion real 7, dual 8).
// Quaternions are (x, y, z, w). Matches src/deform (the CPU reference) formula for formula.

uniform sampler2D bones;

vec4 bone_texel(uint j, int k) {
    return texelFetch(bones, ivec2(int(j) * 9 + k, 0), 0);
}

mat4 bone_matrix(uint j) {
    return mat4(bone_texel(j, 0), bone_texel(j, 1), bone_texel(j, 2), bone_texel(j, 3));
}

mat3 bone_normal_matrix(uint j) {
    return mat3(bone_texel(j, 4).xyz, bone_texel(j, 5).xyz, bone_texel(j, 6).xyz);
}

vec3 quat_rotate(vec4 q, vec3 v) {
    return v + 2.0 * cross(q.xyz, cross(q.xyz, v) + q.w * v);
}

vec4 quat_mul(vec4 a, vec4 b) {
    return vec4(a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz), a.w * b.w - dot(a.xyz, b.xyz));
}

// Skin position `p` and normal `n` by up to 4 influences; `wq` are bytes summing to 255 (all zero: unweighted,
// left in place). Slot 0 is the dominant joint.
void skin(vec3 p, vec3 n, uvec4 joints, uvec4 wq, out vec3 sp, out vec3 sn) {
    sp = p;
    sn = n;
    if (wq == uvec4(0u)) {
        return;
    }
    vec4 w = vec4(wq) / 255.0;
#ifdef DQS
    vec4 q0 = bone_texel(joints.x, 7);
    vec4 real = vec4(0.0);
    vec4 dual = vec4(0.0);
    for (int k = 0; k < 4; k++) {
        if (wq[k] == 0u) continue;
        vec4 r = bone_texel(joints[k], 7);
        vec4 d = bone_texel(joints[k], 8);
        float s = dot(r, q0) < 0.0 ? -w[k] : w[k];
        real += r * s;
        dual += d * s;
    }
    float len = length(real);
    if (!(len > 1e-12)) {
        return;
    }
    real /= len;
    dual /= len;
    dual -= real * dot(real, dual);
    vec4 t = quat_mul(dual, vec4(-real.xyz, real.w)) * 2.0;
    sp = quat_rotate(real, p) + t.xyz;
    vec3 rn = quat_rotate(real, n);
    float ln = length(rn);
    sn = ln > 0.0 ? rn / ln : n;
#else
    vec3 acc_p = vec3(0.0);
    vec3 acc_n = vec3(0.0);
    for (int k = 0; k < 4; k++) {
        if (wq[k] == 0u) continue;
        acc_p += w[k] * (bone_matrix(joints[k]) * vec4(p, 1.0)).xyz;
        acc_n += w[k] * (bone_normal_matrix(joints[k]) * n);
    }
    sp = acc_p;
    float ln = length(acc_n);
    sn = ln > 0.0 ? acc_n / ln : n;
#endif
}
