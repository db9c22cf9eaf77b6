// Lines with a colour per vertex: the ground grid and the skeleton.
in vec3 position;
in vec4 color;
uniform mat4 clip_from_world;
out vec4 v_color;
void main() {
    v_color = color;
    gl_Position = clip_from_world * vec4(position, 1.0);
}
